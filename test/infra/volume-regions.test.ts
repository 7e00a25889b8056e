/**
 * RestoreVolumes' IAM for a restore into another region of the stack's own account (volumeRegion
 * without a role), evaluated with the rehearsal's IAM simulator on the synthesized role: it may
 * create, tag and encrypt restored volumes in the regions named (volumeRegions, and those of
 * drTargets in its own account) as in its own, and in no other region. Also the context keys.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { volumeContext } from '../../infra/bin/volume-context.js';
import { LifeboatStack, type LifeboatStackProps } from '../../infra/lifeboat-stack.js';
import {
  type DeployedPolicies,
  deployedPolicies,
  mayCall,
  type PolicyDocument,
  rolesNamed,
} from './dr-policies.js';

const SOURCE = { account: '123456789012', region: 'us-east-1' };
const DR_ACCOUNT = '210987654321';

function deploy(props: Partial<LifeboatStackProps>): { policies: DeployedPolicies; stack: LifeboatStack } {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new LifeboatStack(app, 'Lifeboat', { env: SOURCE, clusters: ['prod-a'], ...props });
  return { stack, policies: deployedPolicies({ template: Template.fromStack(stack), ...SOURCE }) };
}

/** The calls RestoreVolumes makes to restore a volume from a snapshot copy in `region`. */
function restoreCallsIn(
  region: string,
): { action: string; resource: string; context?: Record<string, string> }[] {
  const key = `arn:aws:kms:${region}:${SOURCE.account}:key/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0`;
  const viaEc2 = { 'kms:ViaService': `ec2.${region}.amazonaws.com` };
  return [
    {
      action: 'ec2:CreateVolume',
      resource: `arn:aws:ec2:${region}:${SOURCE.account}:volume/*`,
      context: { 'aws:RequestTag/velero.io/restore': 'r1' },
    },
    { action: 'ec2:CreateVolume', resource: `arn:aws:ec2:${region}::snapshot/snap-0123456789abcdef0` },
    {
      action: 'ec2:CreateTags',
      resource: `arn:aws:ec2:${region}:${SOURCE.account}:volume/vol-0123456789abcdef0`,
      context: { 'ec2:CreateAction': 'CreateVolume' },
    },
    { action: 'ec2:DescribeSnapshots', resource: '*' },
    { action: 'kms:Decrypt', resource: key, context: viaEc2 },
    { action: 'kms:GenerateDataKeyWithoutPlaintext', resource: key, context: viaEc2 },
    {
      action: 'kms:CreateGrant',
      resource: key,
      context: { ...viaEc2, 'kms:GrantIsForAWSResource': 'true' },
    },
  ];
}

/** A customer key's default key policy: the account's IAM policies decide. */
const DEFAULT_KEY_POLICY: PolicyDocument = {
  Statement: [
    {
      Effect: 'Allow',
      Principal: { AWS: `arn:aws:iam::${SOURCE.account}:root` },
      Action: 'kms:*',
      Resource: '*',
    },
  ],
};

/** Which of those calls RestoreVolumes' role may make (the key's default policy: IAM decides). */
async function allowedIn(policies: DeployedPolicies, region: string): Promise<Record<string, boolean>> {
  const [roleArn] = rolesNamed(policies, 'RestoreVolumesRole');
  if (!roleArn) throw new Error('no RestoreVolumes role');
  const verdicts: Record<string, boolean> = {};
  for (const call of restoreCallsIn(region))
    verdicts[`${call.action} ${call.resource}`] = await mayCall({
      principal: { roleArn, policies: policies.roles.get(roleArn) ?? [] },
      action: call.action,
      resource: call.resource,
      resourceAccount: SOURCE.account,
      ...(call.context ? { context: call.context } : {}),
      ...(call.action.startsWith('kms:') ? { resourcePolicy: DEFAULT_KEY_POLICY } : {}),
    });
  return verdicts;
}

const all = (verdicts: Record<string, boolean>, value: boolean) =>
  Object.fromEntries(Object.keys(verdicts).map((k) => [k, value]));

describe('RestoreVolumes restoring into another region of its account', () => {
  it('may create, tag and encrypt volumes in the regions named, as in its own, and in no other', async () => {
    const { policies, stack } = deploy({ volumeRegions: ['us-west-2'] });

    const own = await allowedIn(policies, SOURCE.region);
    const named = await allowedIn(policies, 'us-west-2');
    const other = await allowedIn(policies, 'eu-west-1');

    expect(own).toEqual(all(own, true));
    expect(named).toEqual(all(named, true));
    expect(Object.entries(other).filter(([, allowed]) => allowed)).toEqual([
      ['ec2:DescribeSnapshots *', true],
    ]);
    const report = new AwsSolutionsChecks(stack, { verbose: true }).validateScope(stack);
    expect(report.violations.map((v) => `${v.ruleName}: ${v.description}`)).toEqual([]);
  }, 60_000);

  it('may restore into the region of a DR target in its own account, not of one in another', async () => {
    const { policies } = deploy({
      drTargets: [
        { account: SOURCE.account, region: 'us-west-2' },
        { account: DR_ACCOUNT, region: 'eu-west-1', roleArn: `arn:aws:iam::${DR_ACCOUNT}:role/copy` },
      ],
    });
    const ownTarget = await allowedIn(policies, 'us-west-2');
    expect(ownTarget).toEqual(all(ownTarget, true));
    expect(
      (await allowedIn(policies, 'eu-west-1'))[
        `ec2:CreateVolume arn:aws:ec2:eu-west-1::snapshot/snap-0123456789abcdef0`
      ],
    ).toBe(false);
  }, 60_000);

  it('may not restore into another region when the stack names none', async () => {
    const { policies } = deploy({});
    const elsewhere = await allowedIn(policies, 'us-west-2');
    expect(Object.entries(elsewhere).filter(([, allowed]) => allowed)).toEqual([
      ['ec2:DescribeSnapshots *', true],
    ]);
  }, 60_000);
});

describe('the volume context of the CDK app', () => {
  const node = (context: Record<string, string>) => new App({ context }).node;

  it('reads snapshot keys and volume regions, and gives nothing when unset', () => {
    const key = 'arn:aws:kms:us-east-1:123456789012:key/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0';
    expect(volumeContext(node({}))).toEqual({});
    expect(
      volumeContext(
        node({ 'lifeboat:snapshotKeys': ` ${key} `, 'lifeboat:volumeRegions': 'us-west-2,eu-west-1' }),
      ),
    ).toEqual({ snapshotKeys: [key], volumeRegions: ['us-west-2', 'eu-west-1'] });
  });

  it('refuses an alias for a key and a made-up region, naming the key', () => {
    expect(() => volumeContext(node({ 'lifeboat:snapshotKeys': 'alias/ebs' }))).toThrow(
      '-c lifeboat:snapshotKeys must be KMS key ARNs (not aliases), not "alias/ebs"',
    );
    expect(() => volumeContext(node({ 'lifeboat:volumeRegions': 'mars' }))).toThrow(
      '-c lifeboat:volumeRegions must be AWS region names, not "mars"',
    );
  });
});
