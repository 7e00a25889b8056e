/**
 * Cross-account DR, read from synthesized templates: the source stack's bucket and key policies
 * name exactly the DR accounts given, replication is configured when asked and absent otherwise,
 * and a DR stack's roles read the source location but cannot write to it, evaluated across the
 * two accounts with the rehearsal's IAM simulator (identity policy of the DR role combined with
 * the source bucket or key policy).
 */
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { LifeboatStack, type LifeboatStackProps } from '../../infra/lifeboat-stack.js';
import {
  type DeployedPolicies,
  deployedPolicies,
  mayCall,
  type PolicyDocument,
  rolesNamed,
} from './dr-policies.js';

const SOURCE = { account: '123456789012', region: 'us-east-1' };
const DR = { account: '210987654321', region: 'us-west-2' };
const OTHER = '333333333333';

function synth(
  props: Partial<LifeboatStackProps>,
  env = SOURCE,
): { stack: LifeboatStack; template: Template } {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new LifeboatStack(app, 'Lifeboat', { env, clusters: ['prod-a'], ...props });
  return { stack, template: Template.fromStack(stack) };
}

type Statement = Record<string, unknown> & { Principal?: { AWS?: unknown } };

/** Every account a policy's statements name as principals (the `AWS` ones). */
function principalAccounts(document: PolicyDocument): string[] {
  const named = (document.Statement as Statement[]).flatMap((s) => {
    const aws = s.Principal?.AWS;
    return aws === undefined ? [] : Array.isArray(aws) ? aws : [aws];
  });
  return [
    ...new Set(named.map((p) => /arn:aws:iam::(\d{12}):root/.exec(String(p))?.[1] ?? String(p))),
  ].sort();
}

describe('a source stack with DR targets', () => {
  let source: DeployedPolicies;
  let template: Template;
  let stack: LifeboatStack;
  beforeAll(() => {
    ({ stack, template } = synth({
      drTargets: [
        { account: DR.account, region: DR.region },
        { account: '444455556666', region: 'eu-west-1' },
      ],
    }));
    source = deployedPolicies({ template, ...SOURCE });
  }, 60_000);

  it('lets exactly the DR accounts named read the backups and the repository, and nothing else', () => {
    const bucket = source.arnOf('Backups', 'AWS::S3::Bucket');
    const policy = source.resources.get(bucket);
    expect(policy).toBeDefined();
    const granted = (policy?.Statement ?? []).filter(
      (s) => s.Effect === 'Allow' && (s as Statement).Principal?.AWS !== undefined,
    );
    expect(principalAccounts({ Statement: granted })).toEqual([DR.account, '444455556666'].sort());
    const actions = granted.flatMap((s) => [s.Action].flat()).sort();
    expect(actions).toEqual(['s3:GetObject', 's3:ListBucket']);
    const read = granted.find((s) => s.Action === 's3:GetObject');
    expect([read?.Resource].flat().sort()).toEqual(
      [`${bucket}/backups/*`, `${bucket}/plugins/lifeboat/repository/*`].sort(),
    );
    const list = granted.find((s) => s.Action === 's3:ListBucket');
    expect(list?.Condition).toEqual({
      StringLike: { 's3:prefix': ['backups/*', 'plugins/lifeboat/repository/*'] },
    });
  });

  it('lets the DR accounts decrypt with the storage key only through S3 in its region', () => {
    const key = source.resources.get(source.arnOf('StorageKey', 'AWS::KMS::Key'));
    const dr = (key?.Statement ?? []).filter((s) =>
      principalAccounts({ Statement: [s] }).includes(DR.account),
    );
    expect(dr).toEqual([
      expect.objectContaining({
        Action: ['kms:Decrypt', 'kms:DescribeKey'],
        Condition: { StringEquals: { 'kms:ViaService': 's3.us-east-1.amazonaws.com' } },
      }),
    ]);
  });

  it('lets the DR accounts unwrap repository data keys, bound to a repository by encryption context', () => {
    const key = source.resources.get(source.arnOf('RepositoryKey', 'AWS::KMS::Key'));
    const dr = (key?.Statement ?? []).filter((s) =>
      principalAccounts({ Statement: [s] }).includes(DR.account),
    );
    expect(dr).toEqual([
      expect.objectContaining({
        Action: ['kms:Decrypt', 'kms:DescribeKey'],
        Condition: { 'ForAnyValue:StringEquals': { 'kms:EncryptionContextKeys': 'lifeboat:repository' } },
      }),
    ]);
  });

  it('grants no other account anything without DR targets, and replicates nothing', () => {
    const { template: plainTemplate } = synth({});
    const plain = deployedPolicies({ template: plainTemplate, ...SOURCE });
    for (const [, policy] of plain.resources)
      expect(principalAccounts(policy).filter((a) => /^\d{12}$/.test(a) && a !== SOURCE.account)).toEqual([]);
    plainTemplate.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: Match.anyValue(),
      ReplicationConfiguration: Match.absent(),
    });
  });

  it('refuses a DR target that is not an account id, naming the field', () => {
    expect(() => synth({ drTargets: [{ account: 'dr', region: 'us-west-2' }] })).toThrow(
      /drTargets\[0\]\.account must be a 12-digit account id/,
    );
  });

  it('passes the cdk-nag AwsSolutions checks', () => {
    const report = new AwsSolutionsChecks(stack, { verbose: true }).validateScope(stack);
    expect(report.violations.map((v) => `${v.ruleName}: ${v.description}`)).toEqual([]);
  });
});

describe('a source stack replicating into the DR account', () => {
  const replica = {
    bucketArn: 'arn:aws:s3:::lifeboat-dr-replica',
    kmsKeyArn: `arn:aws:kms:${DR.region}:${DR.account}:key/replica`,
    account: DR.account,
  };

  it('replicates the backups and the repository, re-encrypted with the replica key, owned by the DR account', () => {
    const { template } = synth({ replicateTo: replica });
    const rule = (prefix: string, priority: number) =>
      Match.objectLike({
        Status: 'Enabled',
        Priority: priority,
        Filter: { Prefix: prefix },
        DeleteMarkerReplication: { Status: 'Disabled' },
        SourceSelectionCriteria: { SseKmsEncryptedObjects: { Status: 'Enabled' } },
        Destination: Match.objectLike({
          Bucket: replica.bucketArn,
          Account: DR.account,
          AccessControlTranslation: { Owner: 'Destination' },
          EncryptionConfiguration: { ReplicaKmsKeyID: replica.kmsKeyArn },
        }),
      });
    template.hasResourceProperties('AWS::S3::Bucket', {
      VersioningConfiguration: { Status: 'Enabled' },
      ReplicationConfiguration: {
        Role: Match.anyValue(),
        Rules: [rule('backups/', 1), rule('plugins/lifeboat/repository/', 2)],
      },
    });
  });

  it('lets the replication role carry Object Lock retention where it is on', () => {
    const { template } = synth({ replicateTo: replica, objectLock: { mode: 'COMPLIANCE' } });
    const source = deployedPolicies({ template, ...SOURCE });
    const [role] = rolesNamed(source, 'ReplicationRole');
    const statements = (source.roles.get(role ?? '') ?? []).flatMap((p) => p.Statement);
    expect(statements.flatMap((s) => [s.Action].flat())).toEqual(
      expect.arrayContaining(['s3:GetObjectRetention', 's3:GetObjectLegalHold', 's3:ReplicateObject']),
    );
  });

  it('passes the cdk-nag AwsSolutions checks', () => {
    const { stack } = synth({ replicateTo: replica });
    const report = new AwsSolutionsChecks(stack, { verbose: true }).validateScope(stack);
    expect(report.violations.map((v) => `${v.ruleName}: ${v.description}`)).toEqual([]);
  });
});

describe('a DR stack reading the source location', () => {
  let source: DeployedPolicies;
  let dr: DeployedPolicies;
  let drStack: LifeboatStack;
  let bucket: string;
  let storageKey: string;
  beforeAll(() => {
    source = deployedPolicies({
      template: synth({ drTargets: [{ account: DR.account, region: DR.region }] }).template,
      ...SOURCE,
    });
    bucket = source.arnOf('Backups', 'AWS::S3::Bucket');
    storageKey = source.arnOf('StorageKey', 'AWS::KMS::Key');
    const synthesized = synth(
      { drSource: { bucketArn: bucket, kmsKeyArn: storageKey, region: SOURCE.region } },
      DR,
    );
    drStack = synthesized.stack;
    dr = deployedPolicies({ template: synthesized.template, ...DR });
  }, 60_000);

  const asRole = (deployment: DeployedPolicies, roleArn: string) => ({
    roleArn,
    policies: deployment.roles.get(roleArn) ?? [],
  });
  /**
   * A call on the source bucket: across accounts with its bucket policy, or (`replica`) as on a
   * replica in the DR account itself, where the role's own policies alone decide.
   */
  const onSource = (options: { roleArn: string; action: string; key: string; replica?: boolean }) =>
    mayCall({
      principal: asRole(dr, options.roleArn),
      action: options.action,
      resource: options.key && options.action !== 's3:ListBucket' ? `${bucket}/${options.key}` : bucket,
      resourceAccount: options.replica ? DR.account : SOURCE.account,
      ...(source.resources.get(bucket) && !options.replica
        ? { resourcePolicy: source.resources.get(bucket) }
        : {}),
      ...(options.action === 's3:ListBucket' ? { context: { 's3:prefix': options.key } } : {}),
    });

  it('lets its restore steps read a source backup through the source bucket policy', async () => {
    const [validate] = rolesNamed(dr, 'ValidateRestoreRole');
    expect(validate).toBeDefined();
    const roleArn = validate ?? '';
    expect(
      await onSource({ roleArn, action: 's3:GetObject', key: 'backups/nightly/velero-backup.json' }),
    ).toBe(true);
    expect(await onSource({ roleArn, action: 's3:ListBucket', key: 'backups/' })).toBe(true);
    // Outside what DR needs: Lifeboat's claims and working data stay private to the source.
    expect(
      await onSource({ roleArn, action: 's3:GetObject', key: 'plugins/lifeboat/work/x/items.json' }),
    ).toBe(false);
    expect(await onSource({ roleArn, action: 's3:ListBucket', key: 'plugins/lifeboat/claims/' })).toBe(false);
  });

  it('lets its restore steps decrypt source objects only through S3 in the source region', async () => {
    const [plan] = rolesNamed(dr, 'PlanRestoreRole');
    const decrypt = (service?: string) =>
      mayCall({
        principal: asRole(dr, plan ?? ''),
        action: 'kms:Decrypt',
        resource: storageKey,
        resourceAccount: SOURCE.account,
        ...(source.resources.get(storageKey) ? { resourcePolicy: source.resources.get(storageKey) } : {}),
        ...(service ? { context: { 'kms:ViaService': service } } : {}),
      });
    expect(await decrypt('s3.us-east-1.amazonaws.com')).toBe(true);
    expect(await decrypt()).toBe(false);
  });

  it('gives no role of the DR stack any write, delete or policy change on the source bucket', async () => {
    const writes = [
      ['s3:PutObject', 'backups/nightly/velero-backup.json'],
      ['s3:PutObject', 'restores/r1/restore-r1-results.gz'],
      ['s3:PutObject', 'plugins/lifeboat/repository/packs/p1'],
      ['s3:DeleteObject', 'backups/nightly/nightly.tar.gz'],
      ['s3:DeleteObjectVersion', 'backups/nightly/nightly.tar.gz'],
      ['s3:PutObjectRetention', 'backups/nightly/nightly.tar.gz'],
      ['s3:PutObjectAcl', 'backups/nightly/nightly.tar.gz'],
      ['s3:PutBucketPolicy', ''],
      ['s3:PutLifecycleConfiguration', ''],
    ] as const;
    const allowed: string[] = [];
    expect(dr.roles.size).toBeGreaterThan(20);
    for (const roleArn of dr.roles.keys())
      for (const [action, key] of writes)
        for (const replica of [false, true])
          if (await onSource({ roleArn, action, key, replica }))
            allowed.push(`${roleArn}: ${action} ${key}${replica ? ' (replica)' : ''}`);
    expect(allowed).toEqual([]);
    // The same evaluation does allow what the roles are granted: reading a backup of the replica.
    const [validate] = rolesNamed(dr, 'ValidateRestoreRole');
    expect(
      await onSource({
        roleArn: validate ?? '',
        action: 's3:GetObject',
        key: 'backups/b/b.tar.gz',
        replica: true,
      }),
    ).toBe(true);
  });

  it('still writes its own restores to its own bucket', async () => {
    const [finalize] = rolesNamed(dr, 'FinalizeRestoreRole');
    const own = dr.arnOf('Backups', 'AWS::S3::Bucket');
    expect(
      await mayCall({
        principal: asRole(dr, finalize ?? ''),
        action: 's3:PutObject',
        resource: `${own}/restores/r1/restore-r1-results.gz`,
        resourceAccount: DR.account,
        ...(dr.resources.get(own) ? { resourcePolicy: dr.resources.get(own) } : {}),
      }),
    ).toBe(true);
  });

  it('lets no account the source did not name read its backups, with the same role policies', async () => {
    const [validate] = rolesNamed(dr, 'ValidateRestoreRole');
    const stranger = (validate ?? '').replace(DR.account, OTHER);
    const policies = dr.roles.get(validate ?? '') ?? [];
    expect(
      await mayCall({
        principal: { roleArn: stranger, policies },
        action: 's3:GetObject',
        resource: `${bucket}/backups/nightly/velero-backup.json`,
        resourceAccount: SOURCE.account,
        ...(source.resources.get(bucket) ? { resourcePolicy: source.resources.get(bucket) } : {}),
      }),
    ).toBe(false);
  });

  it('names the source location in the environment of its restore steps and its API', () => {
    const template = Template.fromStack(drStack);
    const environment = {
      LIFEBOAT_DR_SOURCE_BUCKET: bucket.replace('arn:aws:s3:::', ''),
      LIFEBOAT_DR_SOURCE_PREFIX: '',
      LIFEBOAT_DR_SOURCE_REGION: SOURCE.region,
    };
    for (const name of ['ValidateRestore', 'PlanRestore', 'FinalizeRestore', 'Api'])
      template.hasResourceProperties('AWS::Lambda::Function', {
        FunctionName: `Lifeboat-${name}`,
        Environment: { Variables: Match.objectLike(environment) },
      });
    template.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: 'Lifeboat-FinalizeBackup',
      Environment: {
        Variables: Match.not(Match.objectLike({ LIFEBOAT_DR_SOURCE_BUCKET: Match.anyValue() })),
      },
    });
  });

  it('passes the cdk-nag AwsSolutions checks', () => {
    const report = new AwsSolutionsChecks(drStack, { verbose: true }).validateScope(drStack);
    expect(report.violations.map((v) => `${v.ruleName}: ${v.description}`)).toEqual([]);
  });
});
