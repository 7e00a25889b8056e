/**
 * What one opened repository shares between its writers, readers and maintenance: the store, the
 * keys, the index, and the packs garbage collection has condemned (never deduplicated against,
 * never recovered, still readable until they are deleted) or deleted while an index still names
 * them (never deduplicated against, never named by a manifest).
 */
import { type CondemnedRecord, condemnedRecordSchema } from '../../contracts/repository.js';
import { repositoryKeys } from '../../domain/storage/keys.js';
import type { Clock } from '../../ports/clock.js';
import type { ObjectStore } from '../../ports/object-store.js';
import { mapBounded } from './bounded.js';
import { readJson } from './json-object.js';
import { MaintenanceLockHandle } from './maintenance-lock.js';
import type { RepositoryCrypto } from './repository-crypto.js';
import { RepositoryIndex } from './repository-index.js';

/**
 * More index objects than this plus the extra levels one compaction writes (beyond the object
 * with a location for every blob, one more for each further pack some blob is also in), and a
 * writer's start merges them.
 */
export const COMPACT_AT_INDEX_OBJECTS = 32;

export async function readCondemnedRecords(options: {
  store: ObjectStore;
  signal?: AbortSignal;
}): Promise<{ key: string; record: CondemnedRecord }[]> {
  const keys = await options.store.list(repositoryKeys.condemnedDir, { signal: options.signal });
  const records = await mapBounded(keys, 8, (key) =>
    readJson({
      store: options.store,
      key,
      parse: (v) => condemnedRecordSchema.parse(v),
      signal: options.signal,
    }),
  );
  return records.flatMap((record, i) => (record ? [{ key: keys[i] as string, record }] : []));
}

export class RepositorySession {
  readonly store: ObjectStore;
  readonly crypto: RepositoryCrypto;
  readonly clock: Clock;
  readonly index: RepositoryIndex;
  private condemned = new Set<string>();
  /** Refreshes run one after another: a later one's view (a writer's, after its lease) wins. */
  private refreshing: Promise<void> = Promise.resolve();
  /** The first refresh that succeeded (or is running): what a read needs before it looks up. */
  private loaded: Promise<void> | undefined;

  constructor(options: { store: ObjectStore; crypto: RepositoryCrypto; clock: Clock }) {
    this.store = options.store;
    this.crypto = options.crypto;
    this.clock = options.clock;
    this.index = new RepositoryIndex({ store: options.store, crypto: options.crypto });
  }

  /**
   * Condemned packs first, then the index: a pack deleted after the first read is out of the
   * second. After any refresh already running, never beside it: one listed before a writer's
   * lease must not land after the writer's own and replace its condemned packs.
   */
  refresh(signal?: AbortSignal): Promise<void> {
    const next = this.refreshing
      .catch(() => undefined)
      .then(async () => {
        const records = await readCondemnedRecords({ store: this.store, signal });
        this.condemned = new Set(records.flatMap((r) => r.record.packs.map((p) => p.id)));
        await this.index.refresh(signal);
      });
    this.refreshing = next;
    this.loaded ??= next;
    next.catch(() => {
      if (this.loaded === next) this.loaded = undefined; // the next read tries again
    });
    return next;
  }

  /** Resolves once the index has been loaded (by the refresh under way, or one started now). */
  indexLoaded(signal?: AbortSignal): Promise<void> {
    return this.loaded ?? this.refresh(signal);
  }

  /**
   * Merges the index objects when there are many (each writer adds one per flush), so opening
   * stays a few GETs — one a level when blobs are stored in several packs: a compaction writes
   * one object a location for every blob and one more for each further copy, so the threshold
   * counts those levels on top (else many copies of one blob would make every writer's start
   * compact again). Skipped while a collector holds the maintenance lock; the lock is confirmed
   * before the index is written and before the replaced objects are deleted.
   */
  async compactIfScattered(signal?: AbortSignal): Promise<void> {
    const objects = this.index.indexKeys().length;
    if (objects <= COMPACT_AT_INDEX_OBJECTS) return;
    // Level 0 is one of the 32; each further level (a blob's further copies) adds one.
    if (objects <= COMPACT_AT_INDEX_OBJECTS + this.index.levelCount() - 1) return;
    const lock = new MaintenanceLockHandle({
      store: this.store,
      clock: this.clock,
      ttlMs: 10 * 60_000,
      skewMs: 2 * 60_000,
      purpose: 'index compaction',
    });
    if (!(await lock.acquire({ signal, tryOnly: true }))) return;
    try {
      await this.index.compact({ confirm: (s) => lock.confirm(s), signal });
    } finally {
      await lock.release(signal).catch(() => undefined);
    }
  }

  condemnedPacks(): ReadonlySet<string> {
    return this.condemned;
  }

  /** Packs the index names that were deleted (as of the writer's start: `RepositoryIndex.recover`). */
  gonePacks(): ReadonlySet<string> {
    return this.index.gonePacks();
  }

  /** Whether a writer may count on this blob: indexed in some pack neither condemned nor gone. */
  usable(id: string): boolean {
    const location = this.index.lookup(id);
    if (location === undefined) return false;
    const gone = this.index.gonePacks();
    const fine = (packId: string): boolean => !this.condemned.has(packId) && !gone.has(packId);
    if (fine(location.packId)) return true;
    return this.index.locations(id).some((l) => fine(l.packId));
  }
}
