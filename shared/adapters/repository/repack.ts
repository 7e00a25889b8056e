/**
 * Repacking, a step of garbage collection (docs/repository-format.md, "Repacking"): the live blobs
 * of partly dead packs are read, checked and copied into new packs by a PackCopier under its own
 * lease; each new pack is recorded (gc/repacked/) before it is uploaded, the index is rewritten to
 * name the copies alone, and the record deleted. The old packs then hold nothing live, and the condemnation that
 * follows treats them like any dead pack (two-phase, waiting for the writers that may have loaded
 * them). A run stopped after the record is finished by the next, which prefers recorded copies.
 * Never: a blob copied without its check (length, tag, decompression, id), a pack partly copied
 * when one of its live blobs fails its check, an old location dropped from the index before its
 * copy is durable and indexed.
 */
import { randomBytes } from 'node:crypto';
import { type RepackRecord, repackRecordSchema } from '../../contracts/repository.js';
import { BlobCorrupt } from '../../domain/errors.js';
import type { BlobMarks, RepackPlan } from '../../domain/repository/gc.js';
import { mergeSegments } from '../../domain/repository/index-merge.js';
import { EMPTY_SEGMENT, type IndexSegment, segmentOfPacks } from '../../domain/repository/index-segment.js';
import type { PackEntry } from '../../domain/repository/pack.js';
import { repositoryKeys } from '../../domain/storage/keys.js';
import { mapBounded } from './bounded.js';
import { readJson } from './json-object.js';
import { PackCopier } from './pack-copier.js';
import { openRecord, readPackHeader, readRange } from './pack-io.js';
import type { RepositorySession } from './repository-session.js';

const READ_CONCURRENCY = 8;
const RENEW_LOCK_MS = 60_000;

export interface RepackOutcome {
  /** Old packs whose live blobs were all copied. */
  readonly packsRepacked: number;
  readonly blobsCopied: number;
  /** Bytes of the new packs written. */
  readonly bytesCopied: number;
  readonly packsWritten: number;
  /** Where the copies lie (this run's and an earlier stopped run's): the index names them alone. */
  readonly copies: IndexSegment;
  /** Packs left whole, each with the reason (a live blob that fails its check). */
  readonly problems: readonly string[];
}

const NOTHING: RepackOutcome = {
  packsRepacked: 0,
  blobsCopied: 0,
  bytesCopied: 0,
  packsWritten: 0,
  copies: EMPTY_SEGMENT,
  problems: [],
};

/**
 * The live records of a pack, each checked; or why the pack cannot be repacked. One ranged read
 * from the first live record to the end of the last.
 */
async function readLive(options: {
  session: RepositorySession;
  plan: RepackPlan;
  signal?: AbortSignal;
}): Promise<{ entry: PackEntry; sealed: Uint8Array }[] | string> {
  const { session, plan, signal } = options;
  const first = plan.live[0];
  const last = plan.live.at(-1);
  if (!first || !last) return [];
  const start = first.offset;
  const bytes = await readRange({
    store: session.store,
    packId: plan.pack.id,
    offset: start,
    length: last.offset + last.length - start,
    signal,
  });
  if (!bytes) return `pack ${plan.pack.id} not repacked: it is gone`;
  const records: { entry: PackEntry; sealed: Uint8Array }[] = [];
  for (const entry of plan.live) {
    const sealed = bytes.subarray(entry.offset - start, entry.offset - start + entry.length);
    try {
      await openRecord({ crypto: session.crypto, entry, sealed });
    } catch (error) {
      if (!(error instanceof BlobCorrupt)) throw error;
      return `pack ${plan.pack.id} not repacked (kept whole): ${error.message}`;
    }
    records.push({ entry, sealed });
  }
  return records;
}

/** Copies of an earlier run (stopped before its index named them alone), and their records. */
export interface EarlierCopies {
  readonly keys: readonly string[];
  readonly packs: ReadonlySet<string>;
  readonly copies: IndexSegment;
}

/**
 * The copies earlier repackings recorded and whose records are still there (a run stopped before
 * its index rewrite finished): their packs' own headers, one ranged GET each. The inventory puts
 * them first, so a blob copied and still indexed in its old pack counts for its copy.
 */
export async function readEarlierCopies(options: {
  session: RepositorySession;
  listed: ReadonlySet<string>;
  signal?: AbortSignal;
}): Promise<EarlierCopies> {
  const { session, signal } = options;
  const keys = await session.store.list(repositoryKeys.repackedDir, { signal });
  const records = await mapBounded(keys, READ_CONCURRENCY, (key) =>
    readJson({ store: session.store, key, parse: (v) => repackRecordSchema.parse(v), signal }),
  );
  const packs = new Set(
    records.flatMap((r) => r?.packs.map((p) => p.id) ?? []).filter((id) => options.listed.has(id)),
  );
  const headers = await mapBounded([...packs], READ_CONCURRENCY, (packId) =>
    readPackHeader({ store: session.store, crypto: session.crypto, packId, signal }),
  );
  return { keys, packs, copies: segmentOfPacks(headers.filter((h) => h !== undefined)) };
}

interface RepackOptions {
  session: RepositorySession;
  plans: readonly RepackPlan[];
  earlier: EarlierCopies;
  relocated: BlobMarks;
  packTargetBytes: number;
  leaseTtlMs: number;
  /** Renews the maintenance lock (RepositoryBusy if lost): before each pack and each write. */
  confirmLock: (signal?: AbortSignal) => Promise<void>;
  signal?: AbortSignal;
}

/**
 * Copies the live blobs of the planned packs into new packs, each recorded (a repack record)
 * before its upload, rewrites the index to name the copies alone (those of `earlier` too), then
 * deletes the records; marks every blob copied in `relocated`. A pack with a live blob that fails
 * its check is left whole and reported; anything else that fails stops the run, which a later
 * run finishes: the recorded copies that exist win over the old locations.
 */
export async function repack(options: RepackOptions): Promise<RepackOutcome> {
  const { session, signal, earlier } = options;
  if (options.plans.length === 0 && earlier.keys.length === 0) return NOTHING;
  const { copier, recordKey } = recordedCopier(options);
  try {
    const { packsRepacked, problems } = await copyPlanned({ ...options, copier });
    const written =
      options.plans.length > 0
        ? await copier.flush(signal)
        : { packs: [], copies: EMPTY_SEGMENT, blobsCopied: 0, bytesWritten: 0 };
    const recorded = recordKey();
    const recordKeys = recorded ? [...earlier.keys, recorded] : [...earlier.keys];
    const copies = mergeSegments({ segments: [written.copies, earlier.copies] });
    if (copies.count > 0) {
      await options.confirmLock(signal);
      await session.index.compact({ prefer: copies, signal });
    }
    for (const key of recordKeys) await session.store.delete(key, { signal });
    return {
      packsRepacked,
      blobsCopied: written.blobsCopied,
      bytesCopied: written.bytesWritten,
      packsWritten: written.packs.length,
      copies,
      problems,
    };
  } finally {
    // Released before the condemnation lists its blockers: the copier does not hold back the
    // deletion of the packs it emptied.
    await copier.close(signal).catch(() => undefined);
  }
}

/**
 * The run's copier and its repack record: one record for the run, rewritten before each new pack
 * is uploaded, so a pack that exists is always recorded and a run stopped anywhere leaves no copy
 * the next run would not prefer (a recorded pack never uploaded is skipped). `recordKey` names the
 * record once one was written.
 */
function recordedCopier(
  options: Pick<RepackOptions, 'session' | 'packTargetBytes' | 'leaseTtlMs' | 'confirmLock'>,
): { copier: PackCopier; recordKey: () => string | undefined } {
  const { session } = options;
  const recordId = randomBytes(16).toString('hex');
  const recordKey = repositoryKeys.repacked(recordId);
  const createdAt = session.clock.now().toISOString();
  let recorded = false;
  const copier = new PackCopier({
    session,
    packTargetBytes: options.packTargetBytes,
    leaseTtlMs: options.leaseTtlMs,
    beforeUpload: async (packs, s) => {
      const record: RepackRecord = { recordId, createdAt, packs: [...packs] };
      await options.confirmLock(s);
      await session.store.put(recordKey, JSON.stringify(record), { signal: s });
      recorded = true;
    },
  });
  return { copier, recordKey: () => (recorded ? recordKey : undefined) };
}

/** Copies the live blobs of each planned pack whose live blobs all pass their check. */
async function copyPlanned(
  options: RepackOptions & { copier: PackCopier },
): Promise<{ packsRepacked: number; problems: string[] }> {
  const { session, signal, copier } = options;
  const problems: string[] = [];
  let packsRepacked = 0;
  let confirmedAt = -Infinity;
  for (const plan of options.plans) {
    // The lock renewed now and then while copying (it lasts far longer than a minute).
    if (session.clock.now().getTime() - confirmedAt >= RENEW_LOCK_MS) {
      await options.confirmLock(signal);
      confirmedAt = session.clock.now().getTime();
    }
    if (!copier.lease.isActive()) await copier.start(signal);
    const records = await readLive({ session, plan, signal });
    if (typeof records === 'string') {
      problems.push(records);
      continue;
    }
    for (const record of records) await copier.add({ ...record, signal });
    // Used only once the index names the copies alone (a failure before ends the run).
    for (const record of records) options.relocated.mark(record.entry.id);
    packsRepacked++;
  }
  return { packsRepacked, problems };
}
