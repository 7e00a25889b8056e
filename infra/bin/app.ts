/**
 * CDK app entry: `npx cdk synth` (cdk.json) or `npm run synth`. Context: `lifeboat:clusters`
 * (EKS cluster names, comma-separated), `lifeboat:objectLock` (GOVERNANCE or COMPLIANCE),
 * `lifeboat:apiAccounts` (the only accounts whose principals may call the API, comma-separated),
 * `lifeboat:alarmTopic` (true: the alarms go to a new SNS topic), `lifeboat:gcSchedule` (when
 * garbage collection runs: an EventBridge Scheduler expression, default `rate(1 hour)`); the DR
 * keys in dr-context.ts.
 */
import { App, Validations } from 'aws-cdk-lib';
import { AccountPrincipal } from 'aws-cdk-lib/aws-iam';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { Node } from 'constructs';
import { LifeboatStack, type LifeboatStackProps } from '../lifeboat-stack.js';
import { drContext } from './dr-context.js';
import { volumeContext } from './volume-context.js';

const app = new App();
try {
  new LifeboatStack(app, 'Lifeboat', stackProps(app.node));
} catch (error) {
  // A bad -c value or prop: the message names it; a stack trace would only bury it.
  if (!(error instanceof Error) || process.env.LIFEBOAT_DEBUG) throw error;
  console.error(`error: ${error.message}`);
  process.exit(1);
}
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
app.synth();

/** The stack's props from the app's context (-c lifeboat:…), each value checked by name. */
function stackProps(node: Node): LifeboatStackProps {
  const clusters = String(node.tryGetContext('lifeboat:clusters') ?? '')
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  const lockMode = String(node.tryGetContext('lifeboat:objectLock') ?? '').toUpperCase();
  if (lockMode && lockMode !== 'GOVERNANCE' && lockMode !== 'COMPLIANCE')
    throw new Error(`-c lifeboat:objectLock must be GOVERNANCE or COMPLIANCE, not "${lockMode}"`);
  const apiAccounts = String(node.tryGetContext('lifeboat:apiAccounts') ?? '')
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);
  for (const account of apiAccounts)
    if (!/^\d{12}$/.test(account))
      throw new Error(`-c lifeboat:apiAccounts must be 12-digit account ids, not "${account}"`);
  const alarmTopic = String(node.tryGetContext('lifeboat:alarmTopic') ?? '') === 'true';
  const gcSchedule = String(node.tryGetContext('lifeboat:gcSchedule') ?? '').trim();
  if (gcSchedule && !/^(rate|cron)\(.+\)$/.test(gcSchedule))
    throw new Error(
      `-c lifeboat:gcSchedule must be a Scheduler expression, rate(…) or cron(…), not "${gcSchedule}"`,
    );
  return {
    clusters,
    ...(apiAccounts.length ? { apiPrincipals: apiAccounts.map((a) => new AccountPrincipal(a)) } : {}),
    ...(alarmTopic ? { alarmTopic } : {}),
    ...(gcSchedule ? { garbageCollection: { expression: gcSchedule } } : {}),
    ...(lockMode ? { objectLock: { mode: lockMode as 'GOVERNANCE' | 'COMPLIANCE' } } : {}),
    // Cross-account DR: lifeboat:drTargets, replicateTo, drSource…, crossAccountRestoreRoles.
    ...drContext(node),
    // Volumes: lifeboat:snapshotKeys (keys copySnapshots may grant), lifeboat:volumeRegions.
    ...volumeContext(node),
    env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  };
}
