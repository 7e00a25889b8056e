/**
 * Garbage collection over the object store (docs/repository-format.md, "Garbage collection"):
 * under the maintenance lock, mark every blob reachable from the manifests (block maps and what
 * they list; file trees through file mode's own reader), copy the live blobs of mostly dead packs
 * into new packs (repack.ts), condemn packs with no live blob (those emptied by the copy too), and
 * delete condemned packs once every writer that could have loaded them before their condemnation
 * has ended and no manifest written since uses them.
 * Never: a pack deleted while an index still names it, a pack deleted on a lease still live, a
 * live blob's only indexed copy in a pack being deleted.
 */
import { randomBytes } from 'node:crypto';
import type { CondemnedRecord } from '../../contracts/repository.js';
import { ValidationFailed } from '../../domain/errors.js';
import {
  BlobMarks,
  DEFAULT_REPACK_DEAD_FRACTION,
  liveBlobsMissing,
  packsToCondemn,
  packsToRepack,
  planSweep,
  type SweepPlan,
} from '../../domain/repository/gc.js';
import { mergeSegments } from '../../domain/repository/index-merge.js';
import { type IndexSegment, type PackInfo, segmentOfPacks } from '../../domain/repository/index-segment.js';
import { repositoryKeyId, repositoryKeys } from '../../domain/storage/keys.js';
import type { BlobId, GcReport, SnapshotManifest } from '../../ports/repository.js';
import { mapBounded } from './bounded.js';
import { liveLeases } from './live-leases.js';
import { MaintenanceLockHandle } from './maintenance-lock.js';
import { Marker, type TreeReferences } from './manifest-marker.js';
import { readPackHeader } from './pack-io.js';
import { type EarlierCopies, type RepackOutcome, readEarlierCopies, repack } from './repack.js';
import { SEAL_OVERHEAD } from './repository-crypto.js';
import { type RepositorySession, readCondemnedRecords } from './repository-session.js';

export interface GcReportDetails extends GcReport {
  /** Packs condemned by this run (deleted by a later run, once their blockers have ended). */
  readonly packsCondemned: number;
  /** Packs still condemned, waiting for writers that were running when they were condemned. */
  readonly packsWaiting: number;
  /** Condemned packs a manifest written meanwhile uses again. */
  readonly packsReprieved: number;
  readonly blobsLive: number;
  /** New packs written by repacking (counted in packsKept). */
  readonly packsWritten: number;
}

const READ_CONCURRENCY = 8;
const LOCK_TTL_MS = 30 * 60_000;

/** The fraction of a pack that must be dead for it to be repacked, checked: in (0, 1]. */
function repackThreshold(value: number | undefined): number {
  if (value === undefined) return DEFAULT_REPACK_DEAD_FRACTION;
  if (typeof value !== 'number' || !(value > 0 && value <= 1))
    throw new ValidationFailed([
      {
        path: 'repackDeadFraction',
        message: `must be a fraction in (0, 1] (1 turns repacking off), not ${String(value)}`,
      },
    ]);
  return value;
}

interface CollectGarbageOptions {
  session: RepositorySession;
  manifestIds: (signal?: AbortSignal) => Promise<string[]>;
  readManifest: (id: string, signal?: AbortSignal) => Promise<SnapshotManifest | undefined>;
  getBlob: (id: BlobId, signal?: AbortSignal) => Promise<Uint8Array>;
  fileTreeReferences?: TreeReferences;
  leaseTtlMs: number;
  clockSkewMs: number;
  /** The repository's pack size, for the packs repacking writes. */
  packTargetBytes: number;
  /** A pack this dead (its dead bytes over its size) is repacked; default one half. */
  repackDeadFraction?: number;
  signal?: AbortSignal;
}

/** What every step of a run uses: the session, the maintenance lock held, the clock skew allowed. */
interface GcRun {
  readonly session: RepositorySession;
  readonly lock: MaintenanceLockHandle;
  readonly skewMs: number;
  readonly signal: AbortSignal | undefined;
}

/** Every pack listed and one location of each of their blobs (the bitmap of marks is over it). */
interface Inventory {
  readonly listed: readonly string[];
  readonly listedSet: ReadonlySet<string>;
  readonly indexed: ReadonlySet<string>;
  /** Packs an index names that no longer exist. */
  readonly gone: ReadonlySet<string>;
  readonly earlier: EarlierCopies;
  readonly segment: IndexSegment;
}

export async function collectGarbage(options: CollectGarbageOptions): Promise<GcReportDetails> {
  const { session, signal } = options;
  const skewMs = options.clockSkewMs;
  const minDeadFraction = repackThreshold(options.repackDeadFraction);
  const lock = new MaintenanceLockHandle({
    store: session.store,
    clock: session.clock,
    ttlMs: LOCK_TTL_MS,
    skewMs,
    purpose: 'garbage collection',
  });
  await lock.acquire({ signal });
  try {
    return await collectUnderLock({ options, run: { session, lock, skewMs, signal }, minDeadFraction });
  } finally {
    await lock.release(signal).catch(() => undefined);
  }
}

async function collectUnderLock(gc: {
  options: CollectGarbageOptions;
  run: GcRun;
  minDeadFraction: number;
}): Promise<GcReportDetails> {
  const { options, run } = gc;
  const { session, skewMs, signal } = run;
  // 1. Leases before manifests: a writer gone from this listing wrote its manifest before.
  await liveLeases({ session, skewMs, signal });
  const inventory = await takeInventory(run);

  // 3. Mark from the manifests (read after the leases).
  const marks = new BlobMarks(inventory.segment);
  const marker = new Marker(marks, { ...options, signal });
  await marker.mark(await options.manifestIds(signal));

  // 4. Repack: the live blobs of mostly dead packs (present, indexed, not condemned) are copied
  // into new packs, and the index rewritten to name the copies only; the old packs are then
  // dead. `relocated` marks the blobs copied: they no longer keep their old pack live.
  const existing = await readCondemnedRecords({ store: session.store, signal });
  const alreadyCondemned = new Set(existing.flatMap((r) => r.record.packs.map((p) => p.id)));
  const relocated = new BlobMarks(inventory.segment);
  const repacked = await repack({
    session,
    plans: packsToRepack({
      marks,
      eligible: (id) => inventory.listedSet.has(id) && inventory.indexed.has(id) && !alreadyCondemned.has(id),
      minDeadFraction: gc.minDeadFraction,
      sealOverhead: SEAL_OVERHEAD,
    }),
    earlier: inventory.earlier,
    relocated,
    packTargetBytes: options.packTargetBytes,
    leaseTtlMs: options.leaseTtlMs,
    confirmLock: (s) => run.lock.confirm(s),
    signal,
  });

  const { fresh, records } = await condemn({
    run,
    packs: inventory.segment.packs,
    livePacks: marks.livePacks(relocated),
    alreadyCondemned,
    existing: existing.map((r) => r.record),
  });
  return sweep({ options, run, inventory, marker, marks, relocated, repacked, fresh, records });
}

/**
 * 2. The inventory: every pack listed and its blobs, from the index and, for packs no index
 * covers yet (a writer still uploading, or one that was killed), from their own headers.
 */
async function takeInventory(run: GcRun): Promise<Inventory> {
  const { session, signal } = run;
  await session.refresh(signal);
  const listed = (await session.store.list(repositoryKeys.packsDir, { signal })).map(repositoryKeyId);
  const listedSet = new Set(listed);
  const indexed = new Set(session.index.packs().keys());
  // Copies a repacking recorded and a stopped run left named beside their old locations: first,
  // so each of those blobs counts for its copy.
  const earlier = await readEarlierCopies({ session, listed: listedSet, signal });
  const unindexed = listed.filter((id) => !indexed.has(id) && !earlier.packs.has(id));
  const headers = await mapBounded(unindexed, READ_CONCURRENCY, (packId) =>
    readPackHeader({ store: session.store, crypto: session.crypto, packId, signal }),
  );
  // Packs an index names that no longer exist (an index object that landed after its packs were
  // deleted): dropped before a location is chosen, so a blob they hide counts for another pack.
  const gone = new Set([...indexed].filter((id) => !listedSet.has(id)));
  // A blob in several packs counts for one not condemned where it can: the condemned one goes.
  const segment = mergeSegments({
    segments: [
      earlier.copies,
      session.index.merged({ excludePacks: gone, demotePacks: session.condemnedPacks() }),
      segmentOfPacks(headers.filter((h) => h !== undefined)),
    ],
    excludePacks: gone,
  });
  return { listed, listedSet, indexed, gone, earlier, segment };
}

/**
 * 5. Condemn packs without a live blob; the record first, then the writers that may have
 * loaded those packs before it existed (every lease present once it is written).
 */
async function condemn(step: {
  run: GcRun;
  packs: readonly PackInfo[];
  livePacks: ReadonlySet<string>;
  alreadyCondemned: ReadonlySet<string>;
  existing: CondemnedRecord[];
}): Promise<{ fresh: PackInfo[]; records: CondemnedRecord[] }> {
  const { session, lock, skewMs, signal } = step.run;
  const fresh = packsToCondemn({
    packs: step.packs,
    livePacks: step.livePacks,
    alreadyCondemned: step.alreadyCondemned,
  });
  const records = step.existing;
  if (fresh.length > 0) {
    const record: CondemnedRecord = {
      recordId: randomBytes(16).toString('hex'),
      createdAt: session.clock.now().toISOString(),
      packs: fresh.map((p) => ({ id: p.id, bytes: p.bytes })),
    };
    await lock.confirm(signal);
    await session.store.put(repositoryKeys.condemned(record.recordId), JSON.stringify(record), { signal });
    records.push(record);
  }
  const unblocked = records.filter((r) => r.blockers === undefined);
  if (unblocked.length > 0) {
    const blockers = [...(await liveLeases({ session, skewMs, signal }))];
    for (const record of unblocked) {
      const withBlockers: CondemnedRecord = { ...record, blockers };
      await session.store.put(repositoryKeys.condemned(record.recordId), JSON.stringify(withBlockers), {
        signal,
      });
      records.splice(records.indexOf(record), 1, withBlockers);
    }
  }
  return { fresh, records };
}

/** 6. Sweep: the live leases now, then manifests written since the mark (leases first again). */
async function sweep(step: {
  options: CollectGarbageOptions;
  run: GcRun;
  inventory: Inventory;
  marker: Marker;
  marks: BlobMarks;
  relocated: BlobMarks;
  repacked: RepackOutcome;
  fresh: readonly PackInfo[];
  records: readonly CondemnedRecord[];
}): Promise<GcReportDetails> {
  const { run, inventory, marker, marks, repacked, records } = step;
  const { session, skewMs, signal } = run;
  const liveWriters = await liveLeases({ session, skewMs, signal });
  await marker.mark(await step.options.manifestIds(signal));
  const livePacks = marks.livePacks(step.relocated);
  const plan = planSweep({
    records: records.map((r) => ({ recordId: r.recordId, packs: r.packs, blockers: r.blockers })),
    liveWriters,
    packHasLiveBlob: (id) => livePacks.has(id),
  });
  const deleting = new Set(plan.deletions.map((p) => p.id));
  // A blob a manifest names that no existing pack holds (its only location was in a gone pack,
  // say): nothing here can bring it back, but it is reported, not passed over.
  const problems = [
    ...repacked.problems,
    ...[...marker.missing].map((id) => `live blob ${id}: a manifest names it, but no existing pack holds it`),
  ];
  const kept = await rewriteIndex({ run, gone: inventory.gone, marks, repacked, deleting, problems });
  const deletions = plan.deletions.filter((p) => !kept.has(p.id));
  const bytesFreed = await deletePacks({ run, deletions, listed: inventory.listedSet });
  const waiting = await settleRecords({ run, records, remaining: plan.remaining });
  await session.refresh(signal);
  const deletedListed = deletions.filter((p) => inventory.listedSet.has(p.id)).length;
  return {
    liveManifests: marker.manifests,
    packsKept: inventory.listed.length - deletedListed + repacked.packsWritten,
    packsDeleted: deletedListed,
    bytesFreed,
    packsRepacked: repacked.packsRepacked,
    blobsCopied: repacked.blobsCopied,
    bytesCopied: repacked.bytesCopied,
    problems,
    packsCondemned: step.fresh.length,
    packsWaiting: waiting,
    packsReprieved: plan.reprieved.length + kept.size,
    blobsLive: marks.count(),
    packsWritten: repacked.packsWritten,
  };
}

/**
 * The index rewritten without the packs about to go; returns the packs kept after all, a live
 * blob having no other indexed location (reported in `problems`).
 */
async function rewriteIndex(step: {
  run: GcRun;
  gone: ReadonlySet<string>;
  marks: BlobMarks;
  repacked: RepackOutcome;
  deleting: ReadonlySet<string>;
  problems: string[];
}): Promise<Set<string>> {
  const { run, gone, marks, repacked, deleting, problems } = step;
  const { session, lock, signal } = run;
  const kept = new Set<string>();
  // Rewritten when packs go, locations are preferred, or the index objects are not already one
  // compaction's output (one object a level): an idle run leaves them alone.
  const rewrite =
    deleting.size > 0 || gone.size > 0 || repacked.copies.count > 0 || !session.index.isCompacted();
  if (!rewrite) return kept;
  await lock.confirm(signal);
  // The index first: a pack is never deleted while an index names it. The rewrite keeps every
  // location of a blob but those in the deleted (and gone) packs; should a live blob still be
  // left with none, its packs are kept (a failsafe: reprieved and reported).
  await session.index.compact({
    excludePacks: new Set([...deleting, ...gone]),
    ...(repacked.copies.count > 0 ? { prefer: repacked.copies } : {}),
    check: (next) => {
      for (const id of liveBlobsMissing({ marks, next })) {
        const locations = session.index.locations(id);
        const holders = locations.filter((l) => deleting.has(l.packId)).map((l) => l.packId);
        for (const pack of holders) kept.add(pack);
        if (holders.length > 0)
          problems.push(
            `pack${holders.length > 1 ? 's' : ''} ${holders.join(', ')} kept: live blob ${id} would have had no other indexed location`,
          );
        else if (locations.length > 0)
          problems.push(`live blob ${id}: the index names it only in packs that are gone`);
      }
      return kept;
    },
    confirm: (s) => lock.confirm(s),
    signal,
  });
  return kept;
}

/** Deletes the packs the sweep lets go; returns the bytes freed (of those that were listed). */
async function deletePacks(step: {
  run: GcRun;
  deletions: SweepPlan['deletions'];
  listed: ReadonlySet<string>;
}): Promise<number> {
  const { session, signal } = step.run;
  let bytesFreed = 0;
  for (const pack of step.deletions) {
    await session.store.delete(repositoryKeys.pack(pack.id), { signal });
    if (step.listed.has(pack.id)) bytesFreed += pack.bytes;
  }
  return bytesFreed;
}

/**
 * Each condemned record rewritten to list the packs still waiting, or deleted once none are;
 * returns how many packs wait.
 */
async function settleRecords(step: {
  run: GcRun;
  records: readonly CondemnedRecord[];
  remaining: SweepPlan['remaining'];
}): Promise<number> {
  const { session, signal } = step.run;
  let waiting = 0;
  for (const record of step.records) {
    const left = step.remaining.get(record.recordId) ?? record.packs;
    if (left.length === 0) await session.store.delete(repositoryKeys.condemned(record.recordId), { signal });
    else if (left.length !== record.packs.length)
      await session.store.put(
        repositoryKeys.condemned(record.recordId),
        JSON.stringify({ ...record, packs: left }),
        {
          signal,
        },
      );
    waiting += left.length;
  }
  return waiting;
}
