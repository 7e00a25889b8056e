/**
 * The data mover of a DR deployment restoring from the source's repository, read from the two
 * synthesized stacks and evaluated across the accounts with the rehearsal's IAM simulator (the DR
 * task role's identity policy combined with the source's bucket or key policy): the task role
 * reads the source repository's objects and unwraps its data keys, writes nothing there, and
 * is refused when the source does not name the DR account or the DR stack names no repository
 * key; the restore steps that hand out the jobs name the source's repository.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { restoreRepositoryOf } from '../../functions/common/restore-repository.js';
import { drContext } from '../../infra/bin/dr-context.js';
import type { DrSource } from '../../infra/constructs/dr-access.js';
import { LifeboatStack, type LifeboatStackProps } from '../../infra/lifeboat-stack.js';
import { dataMoverWorkKeys, repositoryKeys } from '../../shared/domain/storage/keys.js';
import { readEnv } from '../../shared/runtime/env.js';
import {
  type DeployedPolicies,
  deployedEnvironment,
  deployedPolicies,
  mayCall,
  rolesNamed,
} from './dr-policies.js';

const SOURCE = { account: '123456789012', region: 'us-east-1' };
const DR = { account: '210987654321', region: 'us-west-2' };
const PACK = repositoryKeys.pack('5f3a9c0d2e7b41a6');
const INDEX = repositoryKeys.index('0a1b2c3d4e5f6789');
/** The keys of the encryption context KmsKeyWrapper binds a repository's wrapped data key to. */
const REPOSITORY_CONTEXT = { 'kms:EncryptionContextKeys': 'lifeboat:repository' };

function synth(props: Partial<LifeboatStackProps>, env: typeof SOURCE): LifeboatStack {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  return new LifeboatStack(app, 'Lifeboat', { env, clusters: ['prod-a'], ...props });
}

const deployed = (stack: LifeboatStack, env: typeof SOURCE): DeployedPolicies =>
  deployedPolicies({ template: Template.fromStack(stack), ...env });

/** The source's bucket and keys, as the source stack (with or without drTargets) deploys them. */
function sourceLocation(source: DeployedPolicies): Required<Omit<DrSource, 'prefix'>> {
  return {
    bucketArn: source.arnOf('Backups', 'AWS::S3::Bucket'),
    kmsKeyArn: source.arnOf('StorageKey', 'AWS::KMS::Key'),
    region: SOURCE.region,
    repositoryKeyArn: source.arnOf('RepositoryKey', 'AWS::KMS::Key'),
  };
}

/** The DR deployment's data-mover task role: exactly one. */
function taskRole(dr: DeployedPolicies): { roleArn: string; policies: DeployedPolicies['roles'] } {
  const roles = rolesNamed(dr, 'DataMoverTaskRole');
  expect(roles).toHaveLength(1);
  return { roleArn: roles[0] ?? '', policies: dr.roles };
}

/**
 * Whether the DR task role may make a call on the source's bucket (an object key, or '' for the
 * bucket) or key, across the accounts with the source's resource policy; `replica` evaluates it as
 * on a replica in the DR account, where the role's own policies alone decide.
 */
async function taskMay(options: {
  dr: DeployedPolicies;
  source: DeployedPolicies;
  action: string;
  /** An object key of the source bucket, or a key's ARN (kms: actions). */
  target: string;
  context?: Record<string, string>;
  replica?: boolean;
}): Promise<boolean> {
  const { dr, source, action, target } = options;
  const { roleArn, policies } = taskRole(dr);
  const bucket = source.arnOf('Backups', 'AWS::S3::Bucket');
  const onKey = action.startsWith('kms:');
  const resource = onKey ? target : action === 's3:ListBucket' ? bucket : `${bucket}/${target}`;
  const resourcePolicy = options.replica ? undefined : source.resources.get(onKey ? target : bucket);
  return mayCall({
    principal: { roleArn, policies: policies.get(roleArn) ?? [] },
    action,
    resource,
    resourceAccount: options.replica ? DR.account : SOURCE.account,
    ...(resourcePolicy ? { resourcePolicy } : {}),
    ...(action === 's3:ListBucket' ? { context: { 's3:prefix': target, ...options.context } } : {}),
    ...(action !== 's3:ListBucket' && options.context ? { context: options.context } : {}),
  });
}

describe('a DR stack whose data mover restores from the source repository', () => {
  let source: DeployedPolicies;
  let dr: DeployedPolicies;
  let drStack: LifeboatStack;
  let location: ReturnType<typeof sourceLocation>;
  beforeAll(() => {
    source = deployed(synth({ drTargets: [{ account: DR.account, region: DR.region }] }, SOURCE), SOURCE);
    location = sourceLocation(source);
    drStack = synth({ drSource: location }, DR);
    dr = deployed(drStack, DR);
  }, 60_000);

  it('lets the task read the source repository’s format object, indexes and packs across the accounts', async () => {
    for (const key of [repositoryKeys.format, INDEX, PACK, repositoryKeys.snapshot('m-1')])
      expect(await taskMay({ dr, source, action: 's3:GetObject', target: key }), key).toBe(true);
    for (const prefix of [repositoryKeys.indexDir, repositoryKeys.packsDir, repositoryKeys.condemnedDir])
      expect(await taskMay({ dr, source, action: 's3:ListBucket', target: prefix }), prefix).toBe(true);
    // The same when the location is the source's replica in the DR account: its own policy alone.
    expect(await taskMay({ dr, source, action: 's3:GetObject', target: PACK, replica: true })).toBe(true);
  });

  it('lets the task decrypt them through S3 and unwrap the repository’s data key, bound to a repository', async () => {
    const viaS3 = { 'kms:ViaService': 's3.us-east-1.amazonaws.com' };
    expect(
      await taskMay({ dr, source, action: 'kms:Decrypt', target: location.kmsKeyArn, context: viaS3 }),
    ).toBe(true);
    expect(
      await taskMay({
        dr,
        source,
        action: 'kms:Decrypt',
        target: location.repositoryKeyArn,
        context: REPOSITORY_CONTEXT,
      }),
    ).toBe(true);
    // Not outside what the data mover asks: a bare Decrypt, another context, the storage key outside S3.
    expect(
      await taskMay({
        dr,
        source,
        action: 'kms:Decrypt',
        target: location.repositoryKeyArn,
        context: { 'kms:EncryptionContextKeys': 'aws:s3:arn' },
      }),
    ).toBe(false);
    expect(await taskMay({ dr, source, action: 'kms:Decrypt', target: location.repositoryKeyArn })).toBe(
      false,
    );
    expect(await taskMay({ dr, source, action: 'kms:Decrypt', target: location.kmsKeyArn })).toBe(false);
  });

  it('binds the task’s own decrypts to a repository context and to S3, whatever a key policy allows', async () => {
    const { roleArn, policies } = taskRole(dr);
    // A key policy letting the DR account do anything: the task role's own policy alone decides.
    const permissive = {
      Statement: [
        {
          Effect: 'Allow',
          Principal: { AWS: `arn:aws:iam::${DR.account}:root` },
          Action: 'kms:*',
          Resource: '*',
        },
      ],
    };
    const decrypt = (key: string, context?: Record<string, string>) =>
      mayCall({
        principal: { roleArn, policies: policies.get(roleArn) ?? [] },
        action: 'kms:Decrypt',
        resource: key,
        resourceAccount: SOURCE.account,
        resourcePolicy: permissive,
        ...(context ? { context } : {}),
      });
    expect(await decrypt(location.repositoryKeyArn, REPOSITORY_CONTEXT)).toBe(true);
    expect(await decrypt(location.repositoryKeyArn)).toBe(false);
    expect(await decrypt(location.kmsKeyArn, { 'kms:ViaService': 's3.us-east-1.amazonaws.com' })).toBe(true);
    expect(await decrypt(location.kmsKeyArn, { 'kms:ViaService': 's3.us-west-2.amazonaws.com' })).toBe(false);
    expect(await decrypt(location.kmsKeyArn)).toBe(false);
  });

  it('gives the task no write, delete or new data key on the source, nor read beyond its repository', async () => {
    const refused = [
      ['s3:PutObject', PACK],
      ['s3:PutObject', repositoryKeys.format],
      ['s3:PutObject', repositoryKeys.lease('w-1')],
      ['s3:DeleteObject', PACK],
      ['s3:DeleteObject', INDEX],
      ['s3:PutObject', dataMoverWorkKeys('job-1').progress],
      ['s3:GetObject', 'backups/nightly/nightly.tar.gz'],
      ['s3:GetObject', dataMoverWorkKeys('job-1').progress],
      ['s3:ListBucket', 'backups/'],
    ] as const;
    const allowed: string[] = [];
    for (const [action, key] of refused)
      for (const replica of [false, true])
        if (await taskMay({ dr, source, action, target: key, replica }))
          allowed.push(`${action} ${key}${replica ? ' (replica)' : ''}`);
    for (const action of ['kms:GenerateDataKey', 'kms:Encrypt', 'kms:CreateGrant'])
      if (
        await taskMay({ dr, source, action, target: location.repositoryKeyArn, context: REPOSITORY_CONTEXT })
      )
        allowed.push(`${action} on the repository key`);
    expect(allowed).toEqual([]);
  });

  it('keeps the task’s write of its jobs’ progress in the DR deployment’s own bucket', async () => {
    const { roleArn, policies } = taskRole(dr);
    const own = dr.arnOf('Backups', 'AWS::S3::Bucket');
    expect(
      await mayCall({
        principal: { roleArn, policies: policies.get(roleArn) ?? [] },
        action: 's3:PutObject',
        resource: `${own}/${dataMoverWorkKeys('job-1').progress}`,
        resourceAccount: DR.account,
        ...(dr.resources.get(own) ? { resourcePolicy: dr.resources.get(own) } : {}),
      }),
    ).toBe(true);
  });

  it('names the source repository in the restore steps that hand out data-mover jobs', () => {
    const template = Template.fromStack(drStack);
    for (const functionName of ['Lifeboat-RestoreVolumes', 'Lifeboat-PatchProvisionedVolumes']) {
      const environment = deployedEnvironment({ template, ...DR, functionName });
      expect(environment.LIFEBOAT_DR_SOURCE_REPOSITORY_KEY, functionName).toBe(location.repositoryKeyArn);
      // What the function makes of it (functions/common/restore-repository.ts), Lambda's region added.
      const jobs = restoreRepositoryOf(readEnv({ ...environment, AWS_REGION: DR.region }));
      expect(jobs, functionName).toEqual({
        repository: {
          bucket: location.bucketArn.replace('arn:aws:s3:::', ''),
          region: SOURCE.region,
          kmsKeyId: location.repositoryKeyArn,
        },
        work: {
          bucket: dr.arnOf('Backups', 'AWS::S3::Bucket').replace('arn:aws:s3:::', ''),
          region: DR.region,
        },
      });
    }
  });

  it('passes the cdk-nag AwsSolutions checks', () => {
    const report = new AwsSolutionsChecks(drStack, { verbose: true }).validateScope(drStack);
    expect(report.violations.map((v) => `${v.ruleName}: ${v.description}`)).toEqual([]);
  });
});

describe('a DR data mover without the grants on either side', () => {
  let source: DeployedPolicies;
  let location: ReturnType<typeof sourceLocation>;
  beforeAll(() => {
    source = deployed(synth({ drTargets: [{ account: DR.account, region: DR.region }] }, SOURCE), SOURCE);
    location = sourceLocation(source);
  }, 60_000);

  const reads = async (dr: DeployedPolicies, from: DeployedPolicies) => ({
    pack: await taskMay({ dr, source: from, action: 's3:GetObject', target: PACK }),
    list: await taskMay({ dr, source: from, action: 's3:ListBucket', target: repositoryKeys.indexDir }),
    unwrap: await taskMay({
      dr,
      source: from,
      action: 'kms:Decrypt',
      target: location.repositoryKeyArn,
      context: REPOSITORY_CONTEXT,
    }),
  });
  const denied = { pack: false, list: false, unwrap: false };

  it('is refused the source repository when the source stack does not name the DR account', async () => {
    // The same physical source, deployed without drTargets: its bucket and key policies name no DR account.
    const plain = deployed(synth({}, SOURCE), SOURCE);
    expect(sourceLocation(plain)).toEqual(location);
    const dr = deployed(synth({ drSource: location }, DR), DR);
    expect(await reads(dr, source)).toEqual({ pack: true, list: true, unwrap: true });
    expect(await reads(dr, plain)).toEqual(denied);
  }, 60_000);

  it('is refused the source repository, and its jobs name their own, without repositoryKeyArn', async () => {
    const { bucketArn, kmsKeyArn, region } = location;
    const stack = synth({ drSource: { bucketArn, kmsKeyArn, region } }, DR);
    const dr = deployed(stack, DR);
    expect(await reads(dr, source)).toEqual(denied);
    const environment = deployedEnvironment({
      template: Template.fromStack(stack),
      ...DR,
      functionName: 'Lifeboat-RestoreVolumes',
    });
    expect(environment.LIFEBOAT_DR_SOURCE_REPOSITORY_KEY).toBeUndefined();
    const own = dr.arnOf('Backups', 'AWS::S3::Bucket').replace('arn:aws:s3:::', '');
    expect(restoreRepositoryOf(readEnv({ ...environment, AWS_REGION: DR.region }))?.repository.bucket).toBe(
      own,
    );
  }, 60_000);
});

describe('the DR source repository key', () => {
  const node = (context: Record<string, string>) => new App({ context }).node;
  const bucketArn = 'arn:aws:s3:::lifeboat-source';
  const keyArn = 'arn:aws:kms:us-east-1:123456789012:key/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0';

  it('is read from -c lifeboat:drSourceRepositoryKey beside the source bucket', () => {
    expect(
      drContext(node({ 'lifeboat:drSource': bucketArn, 'lifeboat:drSourceRepositoryKey': keyArn })).drSource,
    ).toEqual({ bucketArn, repositoryKeyArn: keyArn });
  });

  it.each([
    [
      { 'lifeboat:drSource': bucketArn, 'lifeboat:drSourceRepositoryKey': 'alias/lifeboat-repository' },
      '-c lifeboat:drSourceRepositoryKey must be a KMS key ARN (arn:aws:kms:REGION:ACCOUNT:key/KEY_ID), not "alias/lifeboat-repository"',
    ],
    [
      { 'lifeboat:drSource': bucketArn, 'lifeboat:drSourceRepositoryKey': 'arn:aws:s3:::not-a-key' },
      '-c lifeboat:drSourceRepositoryKey must be a KMS key ARN',
    ],
    [
      { 'lifeboat:drSourceRepositoryKey': keyArn },
      '-c lifeboat:drSourceRepositoryKey needs -c lifeboat:drSource',
    ],
  ])('refuses %j naming the key', (context, message) => {
    expect(() => drContext(node(context))).toThrow(message);
  });

  it('is refused by the stack when it is not a key ARN, naming the field', () => {
    expect(() => synth({ drSource: { bucketArn, repositoryKeyArn: 'lifeboat-repository' } }, DR)).toThrow(
      'drSource.repositoryKeyArn must be a KMS key ARN',
    );
  });
});
