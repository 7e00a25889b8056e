/**
 * Least privilege on the backup storage: every role reads the location (objects and listing,
 * decrypting with its key), and writes or deletes only the kinds of objects its steps write
 * (STORAGE_PREFIXES: its own working data, a backup's files, a restore's, claims). Nothing here
 * grants s3:DeleteObjectVersion: versions go by the bucket's lifecycle rule. Writers that set
 * Object Lock retention get s3:PutObjectRetention on what they write, never
 * s3:BypassGovernanceRetention.
 */
import { Stack, Validations } from 'aws-cdk-lib';
import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { STORAGE_PREFIXES } from '../../shared/domain/storage/keys.js';
import type { DrSource } from './dr-access.js';

export type StorageArea = keyof typeof STORAGE_PREFIXES;

/** The backup storage a workflow uses: the bucket, its key and the location's prefix in it. */
export interface BackupStore {
  readonly bucket: IBucket;
  readonly key: IKey;
  /** The storage location's prefix in the bucket ('' for the bucket's root). */
  readonly prefix: string;
  /** Set when the bucket has Object Lock on: writers of backups set a retention. */
  readonly objectLockMode?: 'GOVERNANCE' | 'COMPLIANCE';
  /** A DR deployment's source location (another account's bucket or its replica): read only. */
  readonly drSource?: DrSource;
}

/** What one role does with the storage beyond reading it. */
export interface StorageAccess {
  readonly writes?: readonly StorageArea[];
  readonly deletes?: readonly StorageArea[];
}

/** The ARN pattern of every object of an area, as a grant names it. */
export function areaObjects(store: BackupStore, area: StorageArea): string {
  return store.bucket.arnForObjects(`${store.prefix}${STORAGE_PREFIXES[area]}*`);
}

export function grantStorageAccess(options: {
  grantee: IGrantable;
  store: BackupStore;
  access: StorageAccess;
}): void {
  const { grantee, store, access } = options;
  const writes = access.writes ?? [];
  const deletes = access.deletes ?? [];
  const add = (statement: PolicyStatement) => grantee.grantPrincipal.addToPrincipalPolicy(statement);
  add(
    new PolicyStatement({
      actions: ['s3:GetObject'],
      resources: [store.bucket.arnForObjects(`${store.prefix}*`)],
    }),
  );
  add(new PolicyStatement({ actions: ['s3:ListBucket'], resources: [store.bucket.bucketArn] }));
  add(new PolicyStatement({ actions: ['kms:Decrypt'], resources: [store.key.keyArn] }));
  if (writes.length > 0) {
    const written = writes.map((area) => areaObjects(store, area));
    add(new PolicyStatement({ actions: ['s3:PutObject'], resources: written }));
    add(new PolicyStatement({ actions: ['kms:GenerateDataKey'], resources: [store.key.keyArn] }));
    if (store.objectLockMode && writes.includes('backups'))
      add(
        new PolicyStatement({
          actions: ['s3:PutObjectRetention'],
          resources: [areaObjects(store, 'backups')],
        }),
      );
  }
  if (deletes.length > 0)
    add(
      new PolicyStatement({
        actions: ['s3:DeleteObject'],
        resources: deletes.map((area) => areaObjects(store, area)),
      }),
    );
}

/** cdk-nag's names of the object patterns a role was granted, acknowledged with the reason. */
export function acknowledgeStorageAccess(scope: Construct, store: BackupStore): void {
  const stack = Stack.of(scope);
  const bucket = `<${stack.getLogicalId(store.bucket.node.defaultChild as never)}.Arn>`;
  const acknowledge = (id: string, reason: string) => Validations.of(scope).acknowledge({ id, reason });
  acknowledge(
    `AwsSolutions-IAM5[Resource::${bucket}/${store.prefix}*]`,
    'Every step reads the backup location: object keys are names of backups, restores and runs',
  );
  for (const [area, prefix] of Object.entries(STORAGE_PREFIXES))
    acknowledge(
      `AwsSolutions-IAM5[Resource::${bucket}/${store.prefix}${prefix}*]`,
      `Writes and deletes are scoped to one kind of object (${area}); its keys name backups, restores or runs`,
    );
}
