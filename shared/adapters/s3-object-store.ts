/**
 * The object store on S3 (or any S3 endpoint): keys under an optional prefix, conditional
 * writes with If-None-Match, multipart streaming for large objects. The SDK retries throttling
 * and 5xx with backoff; what still fails after its retries (SlowDown, 5xx, an endpoint that went
 * away) is a RetryableError, so the step or message is tried again, never failed for good.
 */

import { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { AlreadyExists } from '../domain/errors.js';
import type { ObjectStore, PutOptions, Retention } from '../ports/object-store.js';
import { awsErrorOf } from './aws-errors.js';

/** S3's codes that mean "later". */
const RETRYABLE_CODES: ReadonlySet<string> = new Set([
  'SlowDown',
  'InternalError',
  'ServiceUnavailable',
  'RequestTimeout',
  'RequestTimeTooSkewed',
  'OperationAborted',
]);

/** What a failed S3 call becomes (aws-errors.ts): retryable when a later try may succeed. */
function s3Error(error: unknown, what: string, signal?: AbortSignal): unknown {
  return awsErrorOf(error, { what, signal, service: S3ServiceException, retryableCodes: RETRYABLE_CODES });
}

function status(error: unknown): number | undefined {
  return error instanceof S3ServiceException ? error.$metadata.httpStatusCode : undefined;
}

/** The Object Lock headers of a put that asks for a retention. */
function lockOf(options: PutOptions | undefined) {
  return options?.retention
    ? { ObjectLockMode: options.retention.mode, ObjectLockRetainUntilDate: options.retention.until }
    : {};
}

export class S3ObjectStore implements ObjectStore {
  readonly location: string;
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;

  constructor(options: { client: S3Client; bucket: string; prefix?: string }) {
    this.client = options.client;
    this.bucket = options.bucket;
    this.prefix = options.prefix ? `${options.prefix.replace(/\/+$/, '')}/` : '';
    this.location = `s3://${this.bucket}/${this.prefix}`;
  }

  private key(key: string): string {
    return `${this.prefix}${key}`;
  }

  async put(key: string, body: Uint8Array | string, options?: PutOptions): Promise<void> {
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: this.key(key),
          Body: body,
          ContentType: options?.contentType,
          ...(options?.ifNoneMatch ? { IfNoneMatch: '*' } : {}),
          ...lockOf(options),
        }),
        { abortSignal: options?.signal },
      );
    } catch (error) {
      if (options?.ifNoneMatch && status(error) === 412) throw new AlreadyExists(`object ${key}`);
      throw s3Error(error, `bucket ${this.bucket}: PutObject ${key}`, options?.signal);
    }
  }

  async putStream(key: string, body: AsyncIterable<Uint8Array>, options?: PutOptions): Promise<void> {
    if (options?.ifNoneMatch && (await this.exists(key, options))) throw new AlreadyExists(`object ${key}`);
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.bucket,
        Key: this.key(key),
        Body: Readable.from(body),
        ContentType: options?.contentType,
        // Checked again by S3 when the upload completes: two writers cannot both win.
        ...(options?.ifNoneMatch ? { IfNoneMatch: '*' } : {}),
        ...lockOf(options),
      },
      queueSize: 4,
      partSize: 8 * 1024 * 1024,
    });
    const abort = (): void => void upload.abort();
    options?.signal?.addEventListener('abort', abort, { once: true });
    try {
      await upload.done();
    } catch (error) {
      if (options?.ifNoneMatch && status(error) === 412) throw new AlreadyExists(`object ${key}`);
      throw s3Error(error, `bucket ${this.bucket}: upload of ${key}`, options?.signal);
    } finally {
      options?.signal?.removeEventListener('abort', abort);
    }
  }

  /** From HeadObject (which shows it to a caller allowed s3:GetObjectRetention). */
  async retentionOf(key: string, options?: { signal?: AbortSignal }): Promise<Retention | undefined> {
    try {
      const head = await this.client.send(
        new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(key) }),
        {
          abortSignal: options?.signal,
        },
      );
      if (!head.ObjectLockMode || !head.ObjectLockRetainUntilDate) return undefined;
      return { mode: head.ObjectLockMode, until: new Date(head.ObjectLockRetainUntilDate) };
    } catch (error) {
      if (status(error) === 404) return undefined;
      throw error;
    }
  }

  async get(key: string, options?: { signal?: AbortSignal }): Promise<Uint8Array | undefined> {
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key(key) }), {
        abortSignal: options?.signal,
      });
      return await res.Body?.transformToByteArray();
    } catch (error) {
      if (status(error) === 404) return undefined;
      throw s3Error(error, `bucket ${this.bucket}: GetObject ${key}`, options?.signal);
    }
  }

  async getStream(
    key: string,
    options?: { signal?: AbortSignal },
  ): Promise<AsyncIterable<Uint8Array> | undefined> {
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key(key) }), {
        abortSignal: options?.signal,
      });
      return res.Body as AsyncIterable<Uint8Array> | undefined;
    } catch (error) {
      if (status(error) === 404) return undefined;
      throw s3Error(error, `bucket ${this.bucket}: GetObject ${key}`, options?.signal);
    }
  }

  async getRange(
    key: string,
    range: { offset: number; length: number },
    options?: { signal?: AbortSignal },
  ): Promise<Uint8Array | undefined> {
    if (range.length <= 0) return new Uint8Array(0);
    try {
      const res = await this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: this.key(key),
          Range: `bytes=${range.offset}-${range.offset + range.length - 1}`,
        }),
        { abortSignal: options?.signal },
      );
      return await res.Body?.transformToByteArray();
    } catch (error) {
      if (status(error) === 404) return undefined;
      // A range starting past the end: the object exists, it has no bytes there.
      if (status(error) === 416) return new Uint8Array(0);
      throw s3Error(error, `bucket ${this.bucket}: GetObject ${key} (range)`, options?.signal);
    }
  }

  async exists(key: string, options?: { signal?: AbortSignal }): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(key) }), {
        abortSignal: options?.signal,
      });
      return true;
    } catch (error) {
      if (status(error) === 404) return false;
      throw s3Error(error, `bucket ${this.bucket}: HeadObject ${key}`, options?.signal);
    }
  }

  async size(key: string, options?: { signal?: AbortSignal }): Promise<number | undefined> {
    try {
      const head = await this.client.send(
        new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(key) }),
        {
          abortSignal: options?.signal,
        },
      );
      return head.ContentLength;
    } catch (error) {
      if (status(error) === 404) return undefined;
      throw error;
    }
  }

  async list(prefix: string, options?: { signal?: AbortSignal }): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.client
        .send(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: this.key(prefix),
            ContinuationToken: token,
          }),
          { abortSignal: options?.signal },
        )
        .catch((error: unknown) => {
          throw s3Error(error, `bucket ${this.bucket}: ListObjectsV2 ${prefix}`, options?.signal);
        });
      for (const object of page.Contents ?? [])
        if (object.Key) keys.push(object.Key.slice(this.prefix.length));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys.sort();
  }

  async delete(key: string, options?: { signal?: AbortSignal }): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.key(key) }), {
        abortSignal: options?.signal,
      });
    } catch (error) {
      throw s3Error(error, `bucket ${this.bucket}: DeleteObject ${key}`, options?.signal);
    }
  }
}
