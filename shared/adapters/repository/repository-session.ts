/**
 * What one opened repository shares between its writers, readers and maintenance: the store, the
 * keys, the index, and the packs garbage collection has condemned (never deduplicated against,
 * never recovered, still readable until they are deleted).
 */
import { type CondemnedRecord, condemnedRecordSchema } from '../../contracts/repository.js';
import { repositoryKeys } from '../../domain/storage-keys.js';
import type { Clock } from '../../ports/clock.js';
import type { ObjectStore } from '../../ports/object-store.js';
import { mapBounded } from './bounded.js';
import { readJson } from './json-object.js';
import { MaintenanceLockHandle } from './maintenance-lock.js';
import type { RepositoryCrypto } from './repository-crypto.js';
import { RepositoryIndex } from './repository-index.js';

/** More index objects than this, and a writer's start merges them into one. */
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

  constructor(options: { store: ObjectStore; crypto: RepositoryCrypto; clock: Clock }) {
    this.store = options.store;
    this.crypto = options.crypto;
    this.clock = options.clock;
    this.index = new RepositoryIndex({ store: options.store, crypto: options.crypto });
  }

  /** Condemned packs first, then the index: a pack deleted after the first read is out of the second. */
  async refresh(signal?: AbortSignal): Promise<void> {
    const records = await readCondemnedRecords({ store: this.store, signal });
    this.condemned = new Set(records.flatMap((r) => r.record.packs.map((p) => p.id)));
    await this.index.refresh(signal);
  }

  /**
   * Merges the index objects into one when there are many (each writer adds one per flush), so
   * opening stays a few GETs; skipped while a collector holds the maintenance lock.
   */
  async compactIfScattered(signal?: AbortSignal): Promise<void> {
    if (this.index.indexKeys().length <= COMPACT_AT_INDEX_OBJECTS) return;
    const lock = new MaintenanceLockHandle({
      store: this.store,
      clock: this.clock,
      ttlMs: 10 * 60_000,
      skewMs: 2 * 60_000,
      purpose: 'index compaction',
    });
    if (!(await lock.acquire({ signal, tryOnly: true }))) return;
    try {
      await this.index.compact({ signal });
    } finally {
      await lock.release(signal).catch(() => undefined);
    }
  }

  condemnedPacks(): ReadonlySet<string> {
    return this.condemned;
  }

  /** Whether a writer may count on this blob: indexed in some pack not condemned. */
  usable(id: string): boolean {
    const location = this.index.lookup(id);
    if (location === undefined) return false;
    if (!this.condemned.has(location.packId)) return true;
    return this.index.locations(id).some((l) => !this.condemned.has(l.packId));
  }
}
