/**
 * Where backups live: a KMS-encrypted, TLS-only, versioned bucket with public access blocked
 * and server access logs, laid out as a Velero backup storage location, optionally with S3
 * Object Lock; versions no longer current expire. Lifeboat's working data of running executions
 * goes under a prefix that expires. Its key also encrypts the stack's log groups.
 * Never grants public access or disables encryption.
 */
import { ArnFormat, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { type IRole, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { completeReplicationRole, type ReplicaTarget, replicationRules } from './dr-access.js';
import type { BackupStore } from './storage-access.js';

export interface BackupStorageProps {
  /**
   * After how long working data of executions (under `WORK_PREFIX`) expires: a backstop, since
   * every run deletes its own when it ends.
   */
  readonly workDataExpiration?: Duration;
  /** After how long a version that is no longer current goes (default 30 days). */
  readonly noncurrentVersionExpiration?: Duration;
  /**
   * S3 Object Lock: backup objects are written with a retention until their backup's expiration,
   * in this mode; nothing can delete them before (COMPLIANCE: not even the account's root).
   */
  readonly objectLock?: { readonly mode: 'GOVERNANCE' | 'COMPLIANCE' };
  readonly removalPolicy?: RemovalPolicy;
  /** Replicate the backups and the repository into a DR account's bucket (dr-access.ts). */
  readonly replicateTo?: ReplicaTarget;
}

/** Working data of running executions; outside the Velero layout and expiring. */
export const WORK_PREFIX = 'plugins/lifeboat/work/';

export class BackupStorage extends Construct {
  readonly key: Key;
  readonly bucket: Bucket;
  readonly accessLogs: Bucket;
  readonly objectLockMode: 'GOVERNANCE' | 'COMPLIANCE' | undefined;

  /** The storage as the workflows use it, at a location prefix ('' for the bucket's root). */
  store(prefix = ''): BackupStore {
    return {
      bucket: this.bucket,
      key: this.key,
      prefix,
      ...(this.objectLockMode ? { objectLockMode: this.objectLockMode } : {}),
    };
  }

  constructor(scope: Construct, id: string, props: BackupStorageProps = {}) {
    super(scope, id);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    this.key = new Key(this, 'Key', {
      description: 'Lifeboat backup storage encryption key',
      enableKeyRotation: true,
      removalPolicy,
    });
    this.accessLogs = new Bucket(this, 'AccessLogs', {
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      // S3's log delivery writes through the bucket policy CDK adds (no ACLs: the stack sets
      // @aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy).
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      versioned: true,
      lifecycleRules: [{ expiration: Duration.days(365) }],
      removalPolicy,
    });
    this.bucket = new Bucket(this, 'Backups', {
      encryption: BucketEncryption.KMS,
      encryptionKey: this.key,
      bucketKeyEnabled: true,
      enforceSSL: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      versioned: true,
      serverAccessLogsBucket: this.accessLogs,
      serverAccessLogsPrefix: 'backups/',
      ...(props.objectLock ? { objectLockEnabled: true } : {}),
      ...(props.replicateTo
        ? { replicationRules: replicationRules({ scope: this, target: props.replicateTo, prefix: '' }) }
        : {}),
      lifecycleRules: [
        {
          id: 'expire-work-data',
          prefix: WORK_PREFIX,
          expiration: props.workDataExpiration ?? Duration.days(7),
        },
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
        // Deleted backups and overwritten working data (which holds Secret copies) do not live on.
        {
          id: 'expire-noncurrent-versions',
          noncurrentVersionExpiration: props.noncurrentVersionExpiration ?? Duration.days(30),
          expiredObjectDeleteMarker: true,
        },
      ],
      removalPolicy,
    });
    this.objectLockMode = props.objectLock?.mode;
    const replication = this.bucket.node.tryFindChild('ReplicationRole') as IRole | undefined;
    if (replication && props.replicateTo)
      completeReplicationRole({
        role: replication,
        bucket: this.bucket,
        target: props.replicateTo,
        objectLock: props.objectLock !== undefined,
      });
    this.allowLogEncryption();
  }

  /** Lets CloudWatch Logs encrypt this stack's log groups with the storage key, and nothing else. */
  private allowLogEncryption(): void {
    const stack = Stack.of(this);
    this.key.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal(`logs.${stack.region}.amazonaws.com`)],
        actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
        resources: ['*'],
        conditions: {
          ArnLike: {
            'kms:EncryptionContext:aws:logs:arn': stack.formatArn({
              service: 'logs',
              resource: 'log-group',
              resourceName: '*',
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          },
        },
      }),
    );
  }
}
