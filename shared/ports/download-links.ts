/**
 * Links that let a client download one stored object without the API in the way (a backup's
 * tarball or its log): presigned S3 URLs in AWS, signed links to the local server's own download
 * route under `lifeboat server --local`. A link names one object and expires.
 */
export interface DownloadLinks {
  link(options: {
    /** The object's key, relative to the storage location (domain/storage/keys). */
    readonly key: string;
    readonly expiresInSeconds: number;
  }): Promise<string>;
}
