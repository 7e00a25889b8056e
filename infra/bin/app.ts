/** CDK app entry: `npx cdk synth` (cdk.json) or `npm run synth`. */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { LifeboatStack } from '../lifeboat-stack.js';

const app = new App();
const clusters = String(app.node.tryGetContext('lifeboat:clusters') ?? '')
  .split(',')
  .map((c) => c.trim())
  .filter(Boolean);
new LifeboatStack(app, 'Lifeboat', {
  clusters,
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
app.synth();
