/**
 * What one opened repository shares between its writers, readers and maintenance: the store, the
 * keys, the index, and the packs garbage collection has condemned (never deduplicated against,
 * never recovered, still readable until they are deleted).
 */
import { type CondemnedRecord, condemnedRecordSchema } from '../../contracts/repository.js';
import { RepositoryObjectCorrupt } from '../../domain/errors.js';
import { repositoryKeys } from '../../domain/storage-keys.js';
import type { Clock } from '../../ports/clock.js';
import type { ObjectStore } from '../../ports/object-store.js';
import { mapBounded } from './bounded.js';
import type { RepositoryCrypto } from './repository-crypto.js';
import { RepositoryIndex } from './repository-index.js';

export async function readJson<T>(options: {
  store: ObjectStore;
  key: string;
  parse: (value: unknown) => T;
  signal?: AbortSignal;
}): Promise<T | undefined> {
  const bytes = await options.store.get(options.key, { signal: options.signal });
  if (!bytes) return undefined;
  try {
    return options.parse(JSON.parse(Buffer.from(bytes).toString('utf8')));
  } catch (error) {
    throw new RepositoryObjectCorrupt(options.key, 'not the expected JSON', { cause: error });
  }
}

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

  condemnedPacks(): ReadonlySet<string> {
    return this.condemned;
  }

  /** Whether a writer may count on this blob: indexed, in a pack not condemned. */
  usable(id: string): boolean {
    const location = this.index.lookup(id);
    return location !== undefined && !this.condemned.has(location.packId);
  }
}
