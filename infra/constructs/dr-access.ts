/**
 * Cross-account disaster recovery, both sides of it. The source deployment grants the DR
 * accounts it names what a DR restore needs and nothing more: read of the backups and of the data
 * mover's repository (bucket policy, ListBucket only for those prefixes), decrypt through S3
 * (storage key policy, kms:ViaService) and of repository data keys (repository key policy,
 * encryption context); optionally it replicates those prefixes into a bucket of the DR account.
 * The DR deployment reads such a location (the source bucket or its replica) by ARN.
 * Never grants a DR account any write, delete or ACL action on the source bucket, and never
 * grants the DR deployment's roles a write on the location it reads.
 */
import { Arn, ArnFormat, Stack, Validations } from 'aws-cdk-lib';
import { AccountPrincipal, type IGrantable, type IRole, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { type IKey, Key } from 'aws-cdk-lib/aws-kms';
import { Bucket, type IBucket, type ReplicationRule } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { STORAGE_PREFIXES } from '../../shared/domain/storage/keys.js';

/** A DR account (and its region) allowed to restore this deployment's backups. */
export interface DrTarget {
  readonly account: string;
  readonly region: string;
  /** The DR account's key that copies of volumes are re-encrypted with (snapshot copies). */
  readonly kmsKeyArn?: string;
  /** The DR account's role VolumeOperations makes snapshot copies through (copySnapshots roleArn). */
  readonly roleArn?: string;
}

/** Replication of the backups and the repository into a bucket of the DR account. */
export interface ReplicaTarget {
  readonly bucketArn: string;
  /** The replica bucket's key: replicas are re-encrypted with it. */
  readonly kmsKeyArn: string;
  readonly account: string;
}

/** The location a DR deployment restores from: the source bucket or its replica, by ARN. */
export interface DrSource {
  readonly bucketArn: string;
  /** Its encryption key (omit when it is not KMS-encrypted with a customer key). */
  readonly kmsKeyArn?: string;
  /** The storage location's prefix in it (default: the bucket's root). */
  readonly prefix?: string;
  /** The bucket's region (default: the DR deployment's own). */
  readonly region?: string;
  /**
   * The source's data-mover repository key (a KMS key ARN): with it, the DR deployment's data
   * mover restores moved volumes from the source's repository, read only (dr-source-repository.ts).
   */
  readonly repositoryKeyArn?: string;
}

/** What a DR restore reads below a location's prefix: Velero's backups and the repository. */
export const DR_READ_PREFIXES = [STORAGE_PREFIXES.backups, STORAGE_PREFIXES.repository] as const;

const ACCOUNT = /^\d{12}$/;

/** A location prefix as keys start with it: '' or ending in one slash (as S3ObjectStore makes it). */
export const asPrefix = (prefix: string | undefined): string =>
  prefix ? `${prefix.replace(/\/+$/, '')}/` : '';

function checkAccount(field: string, account: string): void {
  if (!ACCOUNT.test(account)) throw new Error(`${field} must be a 12-digit account id, not "${account}"`);
}

/** The bucket policy and key policies that let the DR accounts read and decrypt, and no more. */
export function grantDrTargets(options: {
  bucket: IBucket;
  storageKey: IKey;
  repositoryKey: IKey;
  prefix: string;
  targets: readonly DrTarget[];
  stack: Stack;
}): void {
  const { bucket, storageKey, repositoryKey, targets, stack } = options;
  const prefix = asPrefix(options.prefix);
  if (targets.length === 0) return;
  for (const [i, t] of targets.entries()) checkAccount(`drTargets[${i}].account`, t.account);
  const principals = [...new Set(targets.map((t) => t.account))].map((a) => new AccountPrincipal(a));
  const readPrefixes = DR_READ_PREFIXES.map((p) => `${prefix}${p}`);
  bucket.addToResourcePolicy(
    new PolicyStatement({
      sid: 'DrTargetsRead',
      principals,
      actions: ['s3:GetObject'],
      resources: readPrefixes.map((p) => bucket.arnForObjects(`${p}*`)),
    }),
  );
  bucket.addToResourcePolicy(
    new PolicyStatement({
      sid: 'DrTargetsList',
      principals,
      actions: ['s3:ListBucket'],
      resources: [bucket.bucketArn],
      conditions: { StringLike: { 's3:prefix': readPrefixes.map((p) => `${p}*`) } },
    }),
  );
  storageKey.addToResourcePolicy(
    new PolicyStatement({
      sid: 'DrTargetsDecryptThroughS3',
      principals,
      actions: ['kms:Decrypt', 'kms:DescribeKey'],
      resources: ['*'],
      conditions: { StringEquals: { 'kms:ViaService': `s3.${stack.region}.amazonaws.com` } },
    }),
  );
  repositoryKey.addToResourcePolicy(
    new PolicyStatement({
      sid: 'DrTargetsDecryptRepositoryKeys',
      principals,
      actions: ['kms:Decrypt', 'kms:DescribeKey'],
      resources: ['*'],
      // The data mover binds every wrapped data key to its repository's id: only such a request
      // (its encryption context has that key) is allowed, in a form IAM evaluators can check.
      conditions: { 'ForAnyValue:StringEquals': { 'kms:EncryptionContextKeys': 'lifeboat:repository' } },
    }),
  );
}

/**
 * S3 replication rules for the DR prefixes into the replica bucket: KMS-encrypted objects
 * replicated and re-encrypted with the replica's key, replicas owned by the destination account.
 * Deletions are not replicated: a compromised source cannot erase the DR copy.
 */
export function replicationRules(options: {
  scope: Construct;
  target: ReplicaTarget;
  prefix: string;
}): ReplicationRule[] {
  const { scope, target, prefix } = options;
  checkAccount('replicateTo.account', target.account);
  const destination = Bucket.fromBucketAttributes(scope, 'ReplicaBucket', {
    bucketArn: target.bucketArn,
    account: target.account,
  });
  const kmsKey = Key.fromKeyArn(scope, 'ReplicaKey', target.kmsKeyArn);
  return DR_READ_PREFIXES.map((p, i) => ({
    id: `dr-${p.replace(/\W+/g, '-').replace(/-$/, '')}`,
    destination,
    kmsKey,
    sseKmsEncryptedObjects: true,
    accessControlTransition: true,
    deleteMarkerReplication: false,
    priority: i + 1,
    filter: { prefix: `${prefix}${p}` },
  }));
}

/**
 * The replication role CDK made (its grants: replication reads of the source, replica writes,
 * the keys on both sides), acknowledged for cdk-nag; with Object Lock on, replicas keep their
 * retention, so it also reads retentions and legal holds.
 */
export function completeReplicationRole(options: {
  role: IRole;
  bucket: IBucket;
  target: ReplicaTarget;
  objectLock: boolean;
}): void {
  const { role, bucket, target } = options;
  const stack = Stack.of(bucket);
  const bucketId = `<${stack.getLogicalId(bucket.node.defaultChild as never)}.Arn>`;
  const acknowledge = (id: string, reason: string) => Validations.of(role).acknowledge({ id, reason });
  acknowledge(
    `AwsSolutions-IAM5[Resource::${bucketId}/*]`,
    'S3 replication reads object versions for replication; the rules replicate only the DR prefixes',
  );
  acknowledge(
    `AwsSolutions-IAM5[Resource::${target.bucketArn}/*]`,
    'S3 replication writes replicas of any key the rules replicate into the DR bucket',
  );
  for (const action of ['kms:ReEncrypt*', 'kms:GenerateDataKey*'])
    acknowledge(
      `AwsSolutions-IAM5[Action::${action}]`,
      "CDK's replication grant: re-encrypting replicas with the replica bucket's key only",
    );
  if (options.objectLock) replicateRetention({ role, bucket, prefix: '' });
}

function replicateRetention(options: { role: IRole; bucket: IBucket; prefix: string }): void {
  const { role, bucket, prefix } = options;
  role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['s3:GetObjectRetention', 's3:GetObjectLegalHold'],
      resources: DR_READ_PREFIXES.map((p) => bucket.arnForObjects(`${prefix}${p}*`)),
    }),
  );
}

/** The source location's bucket name, from its ARN. */
export function sourceBucketName(source: DrSource): string {
  const name = Arn.split(source.bucketArn, ArnFormat.NO_RESOURCE_NAME).resource;
  if (!name) throw new Error(`drSource.bucketArn is not a bucket ARN: "${source.bucketArn}"`);
  return name;
}

/**
 * The environment naming the DR source location, for every function that reads it (and its
 * repository key, whose restore jobs then name the source's repository), and the deployment's
 * own account (`account`): where its restores' volumes land.
 */
export function drSourceEnvironment(options: {
  source: DrSource;
  region: string;
  account?: string;
}): Record<string, string> {
  const { source } = options;
  return {
    LIFEBOAT_DR_SOURCE_BUCKET: sourceBucketName(source),
    LIFEBOAT_DR_SOURCE_PREFIX: source.prefix ?? '',
    LIFEBOAT_DR_SOURCE_REGION: source.region ?? options.region,
    ...(source.repositoryKeyArn ? { LIFEBOAT_DR_SOURCE_REPOSITORY_KEY: source.repositoryKeyArn } : {}),
    ...(options.account ? { LIFEBOAT_DEPLOYMENT_ACCOUNT: options.account } : {}),
  };
}

/** Read-only access to the DR source location: its backups and repository, decrypted through S3. */
export function grantDrSourceRead(options: { grantee: IGrantable; source: DrSource }): void {
  const { grantee, source } = options;
  const prefix = asPrefix(source.prefix);
  const add = (statement: PolicyStatement) => grantee.grantPrincipal.addToPrincipalPolicy(statement);
  const readPrefixes = DR_READ_PREFIXES.map((p) => `${prefix}${p}`);
  add(
    new PolicyStatement({
      actions: ['s3:GetObject'],
      resources: readPrefixes.map((p) => `${source.bucketArn}/${p}*`),
    }),
  );
  add(
    new PolicyStatement({
      actions: ['s3:ListBucket'],
      resources: [source.bucketArn],
      conditions: { StringLike: { 's3:prefix': readPrefixes.map((p) => `${p}*`) } },
    }),
  );
  if (source.kmsKeyArn)
    add(new PolicyStatement({ actions: ['kms:Decrypt', 'kms:DescribeKey'], resources: [source.kmsKeyArn] }));
}

/** cdk-nag's names of the DR source's object patterns, acknowledged with the reason. */
export function acknowledgeDrSourceRead(scope: Construct, source: DrSource): void {
  for (const p of DR_READ_PREFIXES)
    Validations.of(scope).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${source.bucketArn}/${asPrefix(source.prefix)}${p}*]`,
      reason: 'A DR restore reads any backup of the source location, and its repository: read only',
    });
}
