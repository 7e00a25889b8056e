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
import { type CondemnedRecord, writerLeaseSchema } from '../../contracts/repository.js';
import { ValidationFailed } from '../../domain/errors.js';
import { fileTreeChildren } from '../../domain/files/tree.js';
import { parseBlockMapChunk } from '../../domain/repository/block-map.js';
import {
  BlobMarks,
  DEFAULT_REPACK_DEAD_FRACTION,
  leaseIsLive,
  liveBlobsMissing,
  packsToCondemn,
  packsToRepack,
  planSweep,
} from '../../domain/repository/gc.js';
import { mergeSegments, segmentOfPacks } from '../../domain/repository/index-view.js';
import { repositoryKeyId, repositoryKeys } from '../../domain/storage/keys.js';
import type { BlobId, GcReport, SnapshotManifest } from '../../ports/repository.js';
import { mapBounded } from './bounded.js';
import { readJson } from './json-object.js';
import { MaintenanceLockHandle } from './maintenance-lock.js';
import { readPackHeader } from './pack-io.js';
import { readEarlierCopies, repack } from './repack.js';
import { SEAL_OVERHEAD } from './repository-crypto.js';
import { type RepositorySession, readCondemnedRecords } from './repository-session.js';

/**
 * File mode's tree format, owned by file mode (shared/domain/files/tree.ts, fileTreeChildren): the
 * blobs one tree blob names, `nested` ones of the same format (read and followed) and `data`.
 */
export type TreeReferences = (tree: Uint8Array) => {
  readonly nested: readonly BlobId[];
  readonly data: readonly BlobId[];
};

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

async function liveLeases(options: {
  session: RepositorySession;
  skewMs: number;
  signal?: AbortSignal;
}): Promise<Set<string>> {
  const { session, signal } = options;
  const keys = await session.store.list(repositoryKeys.leasesDir, { signal });
  const leases = await mapBounded(keys, READ_CONCURRENCY, (key) =>
    readJson({ store: session.store, key, parse: (v) => writerLeaseSchema.parse(v), signal }).catch(
      () => undefined,
    ),
  );
  const live = new Set<string>();
  const now = session.clock.now();
  const expired: string[] = [];
  keys.forEach((key, i) => {
    const lease = leases[i];
    // An unreadable lease counts as live: blocking a deletion is the safe mistake.
    if (!lease || leaseIsLive({ expiresAt: lease.expiresAt, now, skewMs: options.skewMs }))
      live.add(lease?.writerId ?? repositoryKeyId(key));
    else expired.push(key);
  });
  // Leases of writers that died without releasing them.
  for (const key of expired) await session.store.delete(key, { signal });
  return live;
}

/** Marks what manifests reach, in the inventory's bitmap; trees are read once each. */
class Marker {
  private readonly read = new Set<string>();
  private readonly treesSeen = new Set<string>();
  manifests = 0;
  /** Blobs a manifest reaches that the inventory lacks (no existing pack holds them). */
  readonly missing = new Set<string>();

  constructor(
    private readonly marks: BlobMarks,
    private readonly options: {
      readManifest: (id: string, signal?: AbortSignal) => Promise<SnapshotManifest | undefined>;
      getBlob: (id: BlobId, signal?: AbortSignal) => Promise<Uint8Array>;
      fileTreeReferences?: TreeReferences;
      signal?: AbortSignal;
    },
  ) {}

  /** Marks the manifests not marked yet; a manifest deleted meanwhile is skipped. */
  async mark(ids: readonly string[]): Promise<void> {
    const fresh = ids.filter((id) => !this.read.has(id));
    await mapBounded(fresh, READ_CONCURRENCY, async (id) => {
      const manifest = await this.options.readManifest(id, this.options.signal);
      this.read.add(id);
      if (!manifest) return;
      this.manifests++;
      if (manifest.kind === 'block') await this.markBlock(manifest.blockMap);
      else await this.markTree(manifest.root);
    });
  }

  private async markBlock(blockMap: readonly BlobId[]): Promise<void> {
    await mapBounded(blockMap, READ_CONCURRENCY, async (mapId) => {
      // A block map shared with a manifest marked before (an unchanged range) is marked already.
      if (this.marks.isMarked(mapId)) return;
      this.markOne(mapId);
      const bytes = await this.options.getBlob(mapId, this.options.signal);
      for (const [, id] of parseBlockMapChunk(Buffer.from(bytes).toString('utf8'))) this.markOne(id);
    });
  }

  private markOne(id: BlobId): void {
    if (!this.marks.mark(id)) this.missing.add(id);
  }

  private async markTree(root: BlobId): Promise<void> {
    const references = this.options.fileTreeReferences ?? fileTreeChildren;
    const queue = [root];
    while (queue.length > 0) {
      const batch = queue.splice(0, READ_CONCURRENCY).filter((id) => !this.treesSeen.has(id));
      for (const id of batch) {
        this.treesSeen.add(id);
        this.markOne(id);
      }
      await mapBounded(batch, READ_CONCURRENCY, async (id) => {
        const refs = references(await this.options.getBlob(id, this.options.signal));
        for (const blob of refs.data) this.markOne(blob);
        for (const tree of refs.nested) if (!this.treesSeen.has(tree)) queue.push(tree);
      });
    }
  }
}

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

export async function collectGarbage(options: {
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
}): Promise<GcReportDetails> {
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
    // 1. Leases before manifests: a writer gone from this listing wrote its manifest before.
    await liveLeases({ session, skewMs, signal });

    // 2. The inventory: every pack listed and its blobs, from the index and, for packs no index
    // covers yet (a writer still uploading, or one that was killed), from their own headers.
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
    const inventory = mergeSegments({
      segments: [
        earlier.copies,
        session.index.merged({ excludePacks: gone, demotePacks: session.condemnedPacks() }),
        segmentOfPacks(headers.filter((h) => h !== undefined)),
      ],
      excludePacks: gone,
    });
    const packs = inventory.packs;

    // 3. Mark from the manifests (read after the leases).
    const marks = new BlobMarks(inventory);
    const marker = new Marker(marks, { ...options, signal });
    await marker.mark(await options.manifestIds(signal));

    // 4. Repack: the live blobs of mostly dead packs (present, indexed, not condemned) are copied
    // into new packs, and the index rewritten to name the copies only; the old packs are then
    // dead. `relocated` marks the blobs copied: they no longer keep their old pack live.
    const existing = await readCondemnedRecords({ store: session.store, signal });
    const alreadyCondemned = new Set(existing.flatMap((r) => r.record.packs.map((p) => p.id)));
    const relocated = new BlobMarks(inventory);
    const repacked = await repack({
      session,
      plans: packsToRepack({
        marks,
        eligible: (id) => listedSet.has(id) && indexed.has(id) && !alreadyCondemned.has(id),
        minDeadFraction,
        sealOverhead: SEAL_OVERHEAD,
      }),
      earlier,
      relocated,
      packTargetBytes: options.packTargetBytes,
      leaseTtlMs: options.leaseTtlMs,
      confirmLock: (s) => lock.confirm(s),
      signal,
    });

    // 5. Condemn packs without a live blob; the record first, then the writers that may have
    // loaded those packs before it existed (every lease present once it is written).
    const fresh = packsToCondemn({ packs, livePacks: marks.livePacks(relocated), alreadyCondemned });
    const records: CondemnedRecord[] = existing.map((r) => r.record);
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

    // 6. Sweep: the live leases now, then manifests written since the mark (leases first again).
    const liveWriters = await liveLeases({ session, skewMs, signal });
    await marker.mark(await options.manifestIds(signal));
    const livePacks = marks.livePacks(relocated);
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
      ...[...marker.missing].map(
        (id) => `live blob ${id}: a manifest names it, but no existing pack holds it`,
      ),
    ];
    const kept = new Set<string>();
    // Rewritten when packs go, locations are preferred, or the index objects are not already one
    // compaction's output (one object a level): an idle run leaves them alone.
    const rewrite =
      deleting.size > 0 || gone.size > 0 || repacked.copies.count > 0 || !session.index.isCompacted();
    if (rewrite) {
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
    }
    const deletions = plan.deletions.filter((p) => !kept.has(p.id));
    let bytesFreed = 0;
    for (const pack of deletions) {
      await session.store.delete(repositoryKeys.pack(pack.id), { signal });
      if (listedSet.has(pack.id)) bytesFreed += pack.bytes;
    }
    let waiting = 0;
    for (const record of records) {
      const left = plan.remaining.get(record.recordId) ?? record.packs;
      if (left.length === 0)
        await session.store.delete(repositoryKeys.condemned(record.recordId), { signal });
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
    await session.refresh(signal);
    const deletedListed = deletions.filter((p) => listedSet.has(p.id)).length;
    return {
      liveManifests: marker.manifests,
      packsKept: listed.length - deletedListed + repacked.packsWritten,
      packsDeleted: deletedListed,
      bytesFreed,
      packsRepacked: repacked.packsRepacked,
      blobsCopied: repacked.blobsCopied,
      bytesCopied: repacked.bytesCopied,
      problems,
      packsCondemned: fresh.length,
      packsWaiting: waiting,
      packsReprieved: plan.reprieved.length + kept.size,
      blobsLive: marks.count(),
      packsWritten: repacked.packsWritten,
    };
  } finally {
    await lock.release(signal).catch(() => undefined);
  }
}
