/**
 * gzip as the backup's workers and FinalizeBackup use it: small data on the event loop, large
 * data on libuv's thread pool, beside it.
 */
import { promisify } from 'node:util';
import { constants, gunzip as gunzipCallback, gunzipSync, gzip as gzipCallback, gzipSync } from 'node:zlib';

const gzip = promisify(gzipCallback);
const gunzip = promisify(gunzipCallback);

/**
 * Below this many bytes (characters of a string) data is gzipped on the event loop, which it
 * holds for at most a millisecond or so: handing it to the thread pool (a stream, its callbacks,
 * two thread hops) costs ~0.13 ms of CPU a call, more than deflating a message's result (~30 KB:
 * 0.05 ms) and a quarter of deflating its fragment (~600 KB: 0.5 ms). Same bytes either way.
 */
const INLINE_BYTES = 1 << 20;

/**
 * What the backup writes is gzipped at zlib's fastest level, not its default 6 (Velero's): any
 * gzip reader, Velero's included, reads either. On JSON, level 1 deflates about twice as fast
 * for output some 8 % larger (../shared/notes/performance-anchors.md); on the benchmark's
 * near-identical objects, 3.3× as fast for 1.6× the size (60 MB of tar: 80 ms and 2.3 MB against
 * 260 ms and 1.4 MB). After listing, compression was the largest CPU cost of a backup's items.
 */
export const FAST_GZIP = { level: constants.Z_BEST_SPEED } as const;

export async function gzipFast(data: Uint8Array | string): Promise<Buffer> {
  const size = typeof data === 'string' ? data.length : data.byteLength;
  return size < INLINE_BYTES ? gzipSync(data, FAST_GZIP) : gzip(data, FAST_GZIP);
}

/**
 * Below this many compressed bytes data is inflated on the event loop. Lower than for deflating:
 * what comes out can be tens of times larger (a message's result, ~30 KB gzipped, is the case
 * this is for).
 */
const INLINE_GUNZIP_BYTES = 128 * 1024;

/** The data `gzip` holds; a small input (a message's result) is inflated on the event loop. */
export async function gunzipFast(data: Uint8Array): Promise<Buffer> {
  return data.byteLength < INLINE_GUNZIP_BYTES ? gunzipSync(data) : gunzip(data);
}
