/**
 * CDK app entry: `npx cdk synth` (cdk.json) or `npm run synth`. Context: `lifeboat:clusters`
 * (EKS cluster names, comma-separated), `lifeboat:objectLock` (GOVERNANCE or COMPLIANCE).
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { LifeboatStack } from '../lifeboat-stack.js';

const app = new App();
const clusters = String(app.node.tryGetContext('lifeboat:clusters') ?? '')
  .split(',')
  .map((c) => c.trim())
  .filter(Boolean);
const lockMode = String(app.node.tryGetContext('lifeboat:objectLock') ?? '').toUpperCase();
if (lockMode && lockMode !== 'GOVERNANCE' && lockMode !== 'COMPLIANCE')
  throw new Error(`-c lifeboat:objectLock must be GOVERNANCE or COMPLIANCE, not "${lockMode}"`);
new LifeboatStack(app, 'Lifeboat', {
  clusters,
  ...(lockMode ? { objectLock: { mode: lockMode as 'GOVERNANCE' | 'COMPLIANCE' } } : {}),
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
app.synth();
