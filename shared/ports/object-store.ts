/**
 * Where backups are stored: S3 or a local directory. Keys are relative to the storage
 * location's prefix and come from domain/storage-keys.
 */
/** S3 Object Lock retention of an object: nobody deletes it before `until`. */
export interface Retention {
  readonly mode: 'GOVERNANCE' | 'COMPLIANCE';
  readonly until: Date;
}

export interface PutOptions {
  /** Write only if the key does not exist yet; otherwise fail with AlreadyExists. */
  readonly ifNoneMatch?: boolean;
  /** Object Lock retention; a store without Object Lock (a directory) ignores it. */
  readonly retention?: Retention;
  readonly contentType?: string;
  readonly signal?: AbortSignal;
}

export interface ObjectStore {
  /** A URL-like description for logs: `s3://bucket/prefix` or `file:///dir`. */
  readonly location: string;
  put(key: string, body: Uint8Array | string, options?: PutOptions): Promise<void>;
  /** Streams a large object (a tarball) without holding it in memory. */
  putStream(key: string, body: AsyncIterable<Uint8Array>, options?: PutOptions): Promise<void>;
  get(key: string, options?: { signal?: AbortSignal }): Promise<Uint8Array | undefined>;
  getStream(key: string, options?: { signal?: AbortSignal }): Promise<AsyncIterable<Uint8Array> | undefined>;
  /**
   * Bytes `[offset, offset + length)` of an object (fewer where it ends first); undefined when the
   * object does not exist. Optional: a caller falls back to `get` and slices.
   */
  getRange?(
    key: string,
    range: { readonly offset: number; readonly length: number },
    options?: { signal?: AbortSignal },
  ): Promise<Uint8Array | undefined>;
  exists(key: string, options?: { signal?: AbortSignal }): Promise<boolean>;
  /** An object's size in bytes, undefined when it does not exist. Optional: run metrics use it. */
  size?(key: string, options?: { signal?: AbortSignal }): Promise<number | undefined>;
  /** Every key under the prefix, in lexicographic order. */
  list(prefix: string, options?: { signal?: AbortSignal }): Promise<string[]>;
  delete(key: string, options?: { signal?: AbortSignal }): Promise<void>;
  /** The Object Lock retention of an object, where the store keeps one (S3). */
  retentionOf?(key: string, options?: { signal?: AbortSignal }): Promise<Retention | undefined>;
  /**
   * Removes what writers that are gone left half-written under the prefix (a directory's
   * temporary files of processes no longer running); the count removed. Optional: S3 has no
   * such objects (an unfinished multipart upload is not an object).
   */
  removeTemporaries?(prefix: string): Promise<number>;
}
