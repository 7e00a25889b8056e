/**
 * The IAM copySnapshots and restores elsewhere need, evaluated with the rehearsal's IAM simulator
 * on the synthesized roles: VolumeOperations may share a backup's snapshots with, and grant the
 * keys named in snapshotKeys (no other) to, only the DR accounts named, and assume only their
 * copy roles; RestoreVolumes may
 * assume only the volume-home roles named. Without drTargets or roles, none of it.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { drContext } from '../../infra/bin/dr-context.js';
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
const OTHER = '333333333333';
const COPY_ROLE = `arn:aws:iam::${DR_ACCOUNT}:role/lifeboat-copy`;
const HOME_ROLE = `arn:aws:iam::${DR_ACCOUNT}:role/lifeboat-restore`;
const SNAPSHOT = `arn:aws:ec2:${SOURCE.region}::snapshot/snap-0123456789abcdef0`;
const KEY = `arn:aws:kms:${SOURCE.region}:${SOURCE.account}:key/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0`;
const OTHER_KEY = `arn:aws:kms:${SOURCE.region}:${SOURCE.account}:key/9f8e7d6c-5b4a-3928-1706-f5e4d3c2b1a0`;

function deploy(props: Partial<LifeboatStackProps>): { policies: DeployedPolicies; stack: LifeboatStack } {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new LifeboatStack(app, 'Lifeboat', { env: SOURCE, clusters: ['prod-a'], ...props });
  return { stack, policies: deployedPolicies({ template: Template.fromStack(stack), ...SOURCE }) };
}

/** Whether the named function's role may make the call. */
async function may(
  policies: DeployedPolicies,
  options: {
    role: string;
    action: string;
    resource: string;
    context?: Record<string, string>;
    resourcePolicy?: PolicyDocument;
  },
): Promise<boolean> {
  const [roleArn] = rolesNamed(policies, options.role);
  if (!roleArn) throw new Error(`no role ${options.role}`);
  return mayCall({
    principal: { roleArn, policies: policies.roles.get(roleArn) ?? [] },
    action: options.action,
    resource: options.resource,
    resourceAccount: SOURCE.account,
    ...(options.context ? { context: options.context } : {}),
    ...(options.resourcePolicy ? { resourcePolicy: options.resourcePolicy } : {}),
  });
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

/** VolumeOperations granting `account` use of `key` (by default the snapshots' key). */
const grant = (account: string, key = KEY) => ({
  role: 'VolumeOperationsRole',
  action: 'kms:CreateGrant',
  resource: key,
  context: { 'kms:GranteePrincipal': `arn:aws:iam::${account}:root` },
  resourcePolicy: DEFAULT_KEY_POLICY,
});

const share = (account: string, tags: Record<string, string>) => ({
  role: 'VolumeOperationsRole',
  action: 'ec2:ModifySnapshotAttribute',
  resource: SNAPSHOT,
  context: {
    'ec2:Add/userId': account,
    ...Object.fromEntries(Object.entries(tags).map(([k, v]) => [`aws:ResourceTag/${k}`, v])),
  },
});

describe('a source stack copying snapshots to its DR targets', () => {
  let policies: DeployedPolicies;
  let stack: LifeboatStack;
  beforeAll(() => {
    ({ policies, stack } = deploy({
      drTargets: [{ account: DR_ACCOUNT, region: 'us-west-2', roleArn: COPY_ROLE }],
      crossAccountRestoreRoles: [HOME_ROLE],
      snapshotKeys: [KEY],
    }));
  }, 60_000);

  it('lets VolumeOperations share a backup’s snapshots with the DR account only', async () => {
    expect(await may(policies, share(DR_ACCOUNT, { 'velero.io/backup': 'nightly' }))).toBe(true);
    expect(await may(policies, share(DR_ACCOUNT, { CSIVolumeSnapshotName: 'velero-data-x1' }))).toBe(true);
    // The EBS CSI driver names its snapshots after the CSI request, `snapshot-<uid>` (its docs:
    // the VolumeSnapshotContent's), never after the VolumeSnapshot: a backup's CSI snapshot.
    const csiName = 'snapshot-4f1c2e9a-7b3d-4e5f-9a8b-1c2d3e4f5a6b';
    expect(await may(policies, share(DR_ACCOUNT, { CSIVolumeSnapshotName: csiName }))).toBe(true);
    expect(await may(policies, share(OTHER, { CSIVolumeSnapshotName: csiName }))).toBe(false);
    expect(await may(policies, share(OTHER, { 'velero.io/backup': 'nightly' }))).toBe(false);
    expect(await may(policies, share(DR_ACCOUNT, { Name: 'not-a-backup' }))).toBe(false);
  });

  it('lets VolumeOperations grant the DR account use of a snapshot’s key, and no other account', async () => {
    expect(await may(policies, grant(DR_ACCOUNT))).toBe(true);
    expect(await may(policies, grant(OTHER))).toBe(false);
  });

  it('lets VolumeOperations grant no key but those named in snapshotKeys', async () => {
    expect(await may(policies, grant(DR_ACCOUNT, OTHER_KEY))).toBe(false);
    const elsewhere = KEY.replace(SOURCE.region, 'us-west-2');
    expect(await may(policies, grant(DR_ACCOUNT, elsewhere))).toBe(false);
  });

  it('lets VolumeOperations assume the copy role, and RestoreVolumes the volume-home role, only', async () => {
    const assume = (role: string, resource: string) => ({ role, action: 'sts:AssumeRole', resource });
    expect(await may(policies, assume('VolumeOperationsRole', COPY_ROLE))).toBe(true);
    expect(await may(policies, assume('VolumeOperationsRole', HOME_ROLE))).toBe(false);
    expect(await may(policies, assume('RestoreVolumesRole', HOME_ROLE))).toBe(true);
    expect(await may(policies, assume('RestoreVolumesRole', COPY_ROLE))).toBe(false);
  });

  it('passes the cdk-nag AwsSolutions checks', () => {
    const report = new AwsSolutionsChecks(stack, { verbose: true }).validateScope(stack);
    expect(report.violations.map((v) => `${v.ruleName}: ${v.description}`)).toEqual([]);
  });
});

describe('a source stack copying to another region of its own account', () => {
  it('lets VolumeOperations copy into that region only, tagged', async () => {
    const { policies } = deploy({ drTargets: [{ account: SOURCE.account, region: 'us-west-2' }] });
    const copy = (region: string, tags: Record<string, string>) => ({
      role: 'VolumeOperationsRole',
      action: 'ec2:CopySnapshot',
      resource: `arn:aws:ec2:${region}::snapshot/*`,
      context: Object.fromEntries(Object.entries(tags).map(([k, v]) => [`aws:RequestTag/${k}`, v])),
    });
    expect(await may(policies, copy('us-west-2', { 'velero.io/backup': 'nightly' }))).toBe(true);
    expect(await may(policies, copy('eu-west-1', { 'velero.io/backup': 'nightly' }))).toBe(false);
    expect(await may(policies, copy('us-west-2', {}))).toBe(false);
  }, 60_000);
});

describe('a source stack naming no snapshot keys', () => {
  it('grants no key to the DR accounts (an encrypted snapshot’s copy fails naming the grant)', async () => {
    const { policies } = deploy({
      drTargets: [{ account: DR_ACCOUNT, region: 'us-west-2', roleArn: COPY_ROLE }],
    });
    expect(await may(policies, share(DR_ACCOUNT, { 'velero.io/backup': 'nightly' }))).toBe(true);
    expect(await may(policies, grant(DR_ACCOUNT))).toBe(false);
  }, 60_000);
});

describe('a stack without DR targets or volume-home roles', () => {
  it('grants no share, key grant or role assumption', async () => {
    const { policies } = deploy({});
    expect(await may(policies, share(DR_ACCOUNT, { 'velero.io/backup': 'nightly' }))).toBe(false);
    expect(
      await may(policies, { role: 'RestoreVolumesRole', action: 'sts:AssumeRole', resource: HOME_ROLE }),
    ).toBe(false);
  }, 60_000);
});

describe('the drTargets context', () => {
  it('reads a copy role after the key, and refuses one that is not a role ARN', () => {
    const key = 'arn:aws:kms:us-west-2:210987654321:key/k1';
    const node = (value: string) => new App({ context: { 'lifeboat:drTargets': value } }).node;
    expect(drContext(node(`${DR_ACCOUNT}:us-west-2:${key}:${COPY_ROLE}`)).drTargets).toEqual([
      { account: DR_ACCOUNT, region: 'us-west-2', kmsKeyArn: key, roleArn: COPY_ROLE },
    ]);
    expect(drContext(node(`${DR_ACCOUNT}:us-west-2:${COPY_ROLE}`)).drTargets).toEqual([
      { account: DR_ACCOUNT, region: 'us-west-2', roleArn: COPY_ROLE },
    ]);
    expect(() =>
      drContext(node(`[{"account":"${DR_ACCOUNT}","region":"us-west-2","roleArn":"lifeboat-copy"}]`)),
    ).toThrow('-c lifeboat:drTargets[0].roleArn must be an IAM role ARN, not "lifeboat-copy"');
  });
});
