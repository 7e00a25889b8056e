/**
 * The adapters a data-mover job needs, built from where its job points: the repository's store
 * (S3 bucket and prefix, or a local directory) and what wraps its data key (KMS, or a local key
 * file); block jobs add the EBS direct APIs and EC2 (ebs-access.ts), loaded only for them. Endpoints and credentials come from the standard
 * AWS variables (AWS_REGION, AWS_ENDPOINT_URL, the task role). SDK clients retry throttling and
 * 5xx with backoff.
 */
import { S3Client } from '@aws-sdk/client-s3';
import type { KeyWrapper } from '../ports/key-wrapper.js';
import type { ObjectStore } from '../ports/object-store.js';
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

/**
 * The region of a KMS key given by ARN, else undefined: a replica of a repository in another
 * region is still wrapped by the source's key, which only its own region's KMS unwraps.
 */
export function keyRegionOf(kmsKeyId: string): string | undefined {
  return /^arn:aws[a-z-]*:kms:([a-z0-9-]+):/.exec(kmsKeyId)?.[1];
}

/**
 * `create`: the repository is being created, so a missing local key file may be made up (a
 * function is asked only when the file is missing).
 */
export async function repositoryKeyWrapper(
  keys: { readonly kmsKeyId: string; readonly region: string } | { readonly keyFile: string },
  options: { create?: boolean | (() => Promise<boolean>) } = {},
): Promise<KeyWrapper> {
  if ('keyFile' in keys) return LocalKeyWrapper.fromFile(keys.keyFile, options);
  // Loaded only when used: a task's start-up cost is mostly loading SDK clients. The SDK is
  // imported statically by the loaded module (kmsKeyWrapperAt), never here: a bundled dynamic
  // import of its CommonJS package has no named exports.
  const { kmsKeyWrapperAt } = await import('./kms-key-wrapper.js');
  return kmsKeyWrapperAt({ region: keyRegionOf(keys.kmsKeyId) ?? keys.region, keyId: keys.kmsKeyId });
}
