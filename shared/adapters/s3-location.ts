/**
 * A backup location in another bucket (a DR deployment's source, or its replica), reached in
 * its own region with the function's credentials, seen read only under a name. Never writes.
 */
import { S3Client } from '@aws-sdk/client-s3';
import type { ObjectStore } from '../ports/object-store.js';
import { readOnlyLocation } from './backup-location-store.js';
import { S3ObjectStore } from './s3-object-store.js';

export function s3ReadOnlyLocation(options: {
  name: string;
  region: string;
  bucket: string;
  prefix: string;
  forcePathStyle: boolean;
}): ObjectStore {
  const client = new S3Client({
    region: options.region,
    maxAttempts: 8,
    forcePathStyle: options.forcePathStyle,
  });
  const store = new S3ObjectStore({ client, bucket: options.bucket, prefix: options.prefix });
  return readOnlyLocation({ store, name: options.name });
}
