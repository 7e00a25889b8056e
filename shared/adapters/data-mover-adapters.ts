/**
 * The adapters a data-mover job needs, built from where its job points: the repository's store
 * (S3 bucket and prefix, or a local directory), what wraps its data key (KMS, or a local key
 * file), and the EBS direct APIs and EC2 of an account and region (optionally through an assumed
 * role, for a restore into another account). Endpoints and credentials come from the standard
 * AWS variables (AWS_REGION, AWS_ENDPOINT_URL, the task role). SDK clients retry throttling and
 * 5xx with backoff.
 */
import { EC2Client } from '@aws-sdk/client-ec2';
import { KMSClient } from '@aws-sdk/client-kms';
import { S3Client } from '@aws-sdk/client-s3';
import type { KeyWrapper } from '../ports/key-wrapper.js';
import type { ObjectStore } from '../ports/object-store.js';
import type { SnapshotBlocks } from '../ports/snapshot-blocks.js';
import type { Snapshotter } from '../ports/snapshotter.js';
import { assumedRoleCredentials, snapshotBlocksFor } from './ebs-snapshot-blocks.js';
import { EbsSnapshotter } from './ebs-snapshotter.js';
import { KmsKeyWrapper } from './kms-key-wrapper.js';
import { LocalDirectoryStore } from './local-directory-store.js';
import { LocalKeyWrapper } from './local-key-wrapper.js';
import { S3ObjectStore } from './s3-object-store.js';

export type StoreLocation =
  | {
      readonly bucket: string;
      readonly prefix?: string;
      readonly region: string;
      readonly forcePathStyle?: boolean;
    }
  | { readonly directory: string };

export function objectStoreAt(location: StoreLocation): ObjectStore {
  if ('directory' in location) return new LocalDirectoryStore(location.directory);
  return new S3ObjectStore({
    client: new S3Client({
      region: location.region,
      maxAttempts: 8,
      forcePathStyle: location.forcePathStyle ?? false,
      // Packs are uploaded several at once, each with its own socket.
      requestHandler: { httpAgent: { maxSockets: 64 }, httpsAgent: { maxSockets: 64 } },
    }),
    bucket: location.bucket,
    ...(location.prefix ? { prefix: location.prefix } : {}),
  });
}

/** `create`: the repository is being created, so a missing local key file may be made up. */
export async function repositoryKeyWrapper(
  keys: { readonly kmsKeyId: string; readonly region: string } | { readonly keyFile: string },
  options: { create?: boolean } = {},
): Promise<KeyWrapper> {
  if ('keyFile' in keys) return LocalKeyWrapper.fromFile(keys.keyFile, options);
  return new KmsKeyWrapper({
    client: new KMSClient({ region: keys.region, maxAttempts: 8 }),
    keyId: keys.kmsKeyId,
  });
}

/** The EBS direct APIs and EC2 of one account and region, as the task or through a role. */
export function ebsAccess(options: {
  region: string;
  roleArn?: string;
  externalId?: string;
  maxSockets?: number;
}): { blocks: SnapshotBlocks; snapshotter: Snapshotter } {
  const credentials = options.roleArn
    ? assumedRoleCredentials({
        region: options.region,
        roleArn: options.roleArn,
        ...(options.externalId ? { externalId: options.externalId } : {}),
      })
    : undefined;
  return {
    blocks: snapshotBlocksFor({
      region: options.region,
      ...(credentials ? { credentials } : {}),
      ...(options.maxSockets ? { maxSockets: options.maxSockets } : {}),
    }),
    snapshotter: new EbsSnapshotter({
      client: new EC2Client({
        region: options.region,
        maxAttempts: 8,
        ...(credentials ? { credentials } : {}),
      }),
    }),
  };
}
