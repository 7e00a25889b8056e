/**
 * A backup tarball assembled from fragments: each worker writes its entries as one gzip member
 * holding tar entries without the end-of-archive blocks; the tarball is the version entry's
 * member, the fragments in order, and a member with the two zero blocks that end a tar.
 * Concatenated gzip members are one valid gzip stream (RFC 1952), which Go's gzip reader, and so
 * Velero, reads whole. Pure bookkeeping: no compression or I/O here.
 */
import { LifeboatError } from '../errors.js';

/** Two 512-byte zero blocks end a tar archive (POSIX ustar). */
export const END_OF_ARCHIVE_BYTES = 1024;

/** Removes the end-of-archive blocks of a complete tar, leaving a fragment to concatenate. */
export function withoutEndOfArchive(tar: Uint8Array): Uint8Array {
  if (
    tar.length < END_OF_ARCHIVE_BYTES ||
    tar.subarray(tar.length - END_OF_ARCHIVE_BYTES).some((b) => b !== 0)
  ) {
    throw new LifeboatError('not a complete tar archive: the end-of-archive blocks are missing');
  }
  return tar.subarray(0, tar.length - END_OF_ARCHIVE_BYTES);
}
