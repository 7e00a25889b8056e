/**
 * Download links in AWS: presigned S3 GetObject URLs for one object of the storage location,
 * signed with the API function's own credentials (so a link works only while its role may read
 * the object) and expiring as asked. Signing is local: no request is made.
 */
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { DownloadLinks } from '../ports/download-links.js';

export class S3DownloadLinks implements DownloadLinks {
  private readonly prefix: string;

  constructor(
    private readonly options: {
      readonly client: S3Client;
      readonly bucket: string;
      readonly prefix?: string;
    },
  ) {
    // As S3ObjectStore spells the location's prefix: no slash, or one at its end.
    this.prefix = options.prefix ? `${options.prefix.replace(/\/+$/, '')}/` : '';
  }

  link(options: { key: string; expiresInSeconds: number }): Promise<string> {
    const { client, bucket } = this.options;
    const command = new GetObjectCommand({ Bucket: bucket, Key: `${this.prefix}${options.key}` });
    return getSignedUrl(client, command, { expiresIn: options.expiresInSeconds });
  }
}

/** Links to the storage location's objects, signed in the region with the default credentials. */
export function s3DownloadLinks(options: {
  region: string;
  bucket: string;
  prefix: string;
  forcePathStyle: boolean;
}): S3DownloadLinks {
  const client = new S3Client({ region: options.region, forcePathStyle: options.forcePathStyle });
  return new S3DownloadLinks({ client, bucket: options.bucket, prefix: options.prefix });
}
