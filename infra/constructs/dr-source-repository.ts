/**
 * A DR deployment's data mover reading the source's repository (`drSource.repositoryKeyArn`):
 * restore jobs name that repository (functions/common/restore-repository.ts), so the task role may
 * GetObject and list under the source's `plugins/lifeboat/repository/`, decrypt those objects
 * through S3 with the source location's key, and unwrap repository data keys with the source's
 * repository key, only with a repository's encryption context. Its progress and results go to the
 * deployment's own bucket (DataMover's own grant). The source stack's side is grantDrTargets.
 * Never grants a write, delete or new data key on the source's repository or its keys.
 */
import { Stack, Token, Validations } from 'aws-cdk-lib';
import { type IRole, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { STORAGE_PREFIXES } from '../../shared/domain/storage/keys.js';
import { asPrefix, type DrSource } from './dr-access.js';

/** The encryption context key KmsKeyWrapper binds a repository's data key with. */
const REPOSITORY_CONTEXT_KEY = 'lifeboat:repository';

/** A KMS key's ARN (an alias does not name the key an IAM policy or a key policy governs). */
const KMS_KEY_ARN = /^arn:aws[\w-]*:kms:[a-z]{2}(-[a-z]+)+-\d+:\d{12}:key\/[\w-]+$/;

/** Refuses anything but a KMS key ARN, naming the field. */
export function checkKmsKeyArn(field: string, arn: string): void {
  if (!Token.isUnresolved(arn) && !KMS_KEY_ARN.test(arn))
    throw new Error(`${field} must be a KMS key ARN (arn:aws:kms:REGION:ACCOUNT:key/KEY_ID), not "${arn}"`);
}

/** The source's repository, as its objects' keys start (the location's prefix, then the repository's). */
export function sourceRepositoryPrefix(source: DrSource): string {
  return `${asPrefix(source.prefix)}${STORAGE_PREFIXES.repository}`;
}

/**
 * Lets the data mover's task role read the DR source's repository, when the source names its
 * repository key; nothing otherwise (restores then use the deployment's own repository).
 */
export function grantDrSourceRepositoryRead(options: { role: IRole; source: DrSource }): void {
  const { role, source } = options;
  const keyArn = source.repositoryKeyArn;
  if (keyArn === undefined) return;
  checkKmsKeyArn('drSource.repositoryKeyArn', keyArn);
  const stack = Stack.of(role);
  const repository = sourceRepositoryPrefix(source);
  const add = (statement: PolicyStatement) => role.addToPrincipalPolicy(statement);
  // Packs, indexes, the format object and snapshot manifests: read, never written.
  add(new PolicyStatement({ actions: ['s3:GetObject'], resources: [`${source.bucketArn}/${repository}*`] }));
  add(
    new PolicyStatement({
      actions: ['s3:ListBucket'],
      resources: [source.bucketArn],
      conditions: { StringLike: { 's3:prefix': [`${repository}*`] } },
    }),
  );
  if (source.kmsKeyArn)
    add(
      new PolicyStatement({
        actions: ['kms:Decrypt'],
        resources: [source.kmsKeyArn],
        conditions: {
          StringEquals: { 'kms:ViaService': `s3.${source.region ?? stack.region}.amazonaws.com` },
        },
      }),
    );
  add(
    new PolicyStatement({
      actions: ['kms:Decrypt'],
      resources: [keyArn],
      // The data mover binds every wrapped data key to its repository's id (KmsKeyWrapper). Named
      // by the context's keys, a form IAM evaluators (and the rehearsal's) read as AWS does.
      conditions: { 'ForAnyValue:StringEquals': { 'kms:EncryptionContextKeys': REPOSITORY_CONTEXT_KEY } },
    }),
  );
  Validations.of(role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::${source.bucketArn}/${repository}*]`,
    reason:
      "A DR restore reads the source repository's packs and indexes, named by content hashes: read only",
  });
}
