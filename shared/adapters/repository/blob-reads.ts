/**
 * Reading many blobs by pack: the blobs asked for, located in the index, are read as runs of one
 * pack (records near each other, one ranged GET per run), each run once, several at once, and every
 * blob is handed over as soon as its run is read and checked. A restore asks for thousands of small
 * blobs: this makes it a few requests per pack instead of one per blob, and never reads a range twice.
 * Never: hand over a blob unchecked, or hold more than `concurrency` runs' bytes at once.
 */
import { BlobCorrupt } from '../../domain/errors.js';
import type { BlobLocation } from '../../domain/repository/index-segment.js';
import type { BlobId } from '../../ports/repository.js';
import { mapBounded } from './bounded.js';
import { openRecord, readRange } from './pack-io.js';
import type { RepositorySession } from './repository-session.js';

/** Records read with one request: at most this far apart in their pack (bytes of other records). */
const MAX_READ_GAP_BYTES = 256 * 1024;
/** One request's span at most: memory per read stays bounded whatever is asked for. */
const MAX_READ_SPAN_BYTES = 16 * 1024 * 1024;

/**
 * The located blobs as runs of one pack, each run read with one ranged request: records in
 * offset order whose gaps and total span stay within the bounds. Unlocated ones are left out
 * (getBlob then reports them).
 */
export function readRuns(
  located: readonly (BlobLocation | undefined)[],
): { at: number; location: BlobLocation }[][] {
  const found = located.flatMap((location, at) => (location ? [{ at, location }] : []));
  found.sort((a, b) =>
    a.location.packId === b.location.packId
      ? a.location.offset - b.location.offset
      : a.location.packId < b.location.packId
        ? -1
        : 1,
  );
  const runs: { at: number; location: BlobLocation }[][] = [];
  let run: { at: number; location: BlobLocation }[] = [];
  for (const next of found) {
    const first = run[0];
    const last = run.at(-1);
    const end = last ? last.location.offset + last.location.length : 0;
    const fits =
      first !== undefined &&
      next.location.packId === first.location.packId &&
      next.location.offset - end <= MAX_READ_GAP_BYTES &&
      next.location.offset + next.location.length - first.location.offset <= MAX_READ_SPAN_BYTES;
    if (!fits && run.length > 0) {
      runs.push(run);
      run = [];
    }
    run.push(next);
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

/**
 * Hands each distinct blob of `ids` to `onBlob` once. A blob whose run is gone (a pack collected
 * since the index was loaded) or whose copy there is corrupt is read with `getBlob`, which tries its
 * other locations and reports it (BlobMissing, BlobCorrupt) if none holds it.
 */
export async function readBlobsByPack(options: {
  session: RepositorySession;
  ids: Iterable<BlobId>;
  onBlob: (id: BlobId, data: Uint8Array) => Promise<void>;
  getBlob: (id: BlobId, signal?: AbortSignal) => Promise<Uint8Array>;
  concurrency: number;
  signal?: AbortSignal | undefined;
}): Promise<void> {
  const { session, onBlob, getBlob, signal } = options;
  const distinct = [...new Set(options.ids)];
  await session.indexLoaded(signal);
  const located = distinct.map((id) => session.index.lookup(id));
  const runs = readRuns(located);
  const single = distinct.filter((_, at) => located[at] === undefined);
  await mapBounded(runs, Math.max(1, options.concurrency), async (run) => {
    const first = run[0];
    const last = run.at(-1);
    if (!first || !last) return;
    const start = first.location.offset;
    const bytes = await readRange({
      store: session.store,
      packId: first.location.packId,
      offset: start,
      length: last.location.offset + last.location.length - start,
      signal,
    });
    // Each blob is handed over while the next is opened; the run's handing-over ends with it.
    const handed: Promise<void>[] = [];
    try {
      await handRun({ run, bytes, start, handed, session, distinct, onBlob, getBlob, signal });
    } finally {
      // Nothing handed over is left running when the run fails.
      await Promise.allSettled(handed);
    }
    await Promise.all(handed);
  });
  for (const id of single) await onBlob(id, await getBlob(id, signal));
}

/** Opens a run's records in turn, handing each over (into `handed`) as soon as it is opened. */
async function handRun(o: {
  session: RepositorySession;
  distinct: readonly BlobId[];
  onBlob: (id: BlobId, data: Uint8Array) => Promise<void>;
  getBlob: (id: BlobId, signal?: AbortSignal) => Promise<Uint8Array>;
  signal: AbortSignal | undefined;
  run: { at: number; location: BlobLocation }[];
  bytes: Uint8Array | undefined;
  start: number;
  handed: Promise<void>[];
}): Promise<void> {
  const { run, bytes, start, handed, session, distinct, onBlob, getBlob, signal } = o;
  for (const { at, location } of run) {
    const id = distinct[at] as BlobId;
    const from = location.offset - start;
    const data = bytes
      ? await openRecord({
          crypto: session.crypto,
          entry: location,
          sealed: bytes.subarray(from, from + location.length),
        }).catch((error: unknown) => {
          if (error instanceof BlobCorrupt) return undefined;
          throw error;
        })
      : undefined;
    const handing = onBlob(id, data ?? (await getBlob(id, signal)));
    handing.catch(() => undefined); // awaited by the caller
    handed.push(handing);
  }
}
