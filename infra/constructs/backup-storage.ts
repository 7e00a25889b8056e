/**
 * Where backups live: a KMS-encrypted, TLS-only, versioned bucket with public access blocked
 * and server access logs, laid out as a Velero backup storage location. Lifeboat's working
 * data of running executions goes under a prefix that expires.
 * Never grants public access or disables encryption.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Key } from 'aws-cdk-lib/aws-kms';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';

export interface BackupStorageProps {
  /** Days after which working data of executions (under `workPrefix`) expires. */
  readonly workDataExpiration?: Duration;
  readonly removalPolicy?: RemovalPolicy;
}

/** Working data of running executions; outside the Velero layout and expiring. */
export const WORK_PREFIX = 'plugins/lifeboat/work/';

export class BackupStorage extends Construct {
  readonly key: Key;
  readonly bucket: Bucket;
  readonly accessLogs: Bucket;

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
      lifecycleRules: [
        {
          id: 'expire-work-data',
          prefix: WORK_PREFIX,
          expiration: props.workDataExpiration ?? Duration.days(7),
        },
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      removalPolicy,
    });
  }
}
