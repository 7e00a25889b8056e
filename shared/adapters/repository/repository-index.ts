/**
 * The repository's index as this process knows it: index objects listed and loaded (only new ones
 * on a refresh; everything again if one it had loaded was compacted away), index objects written
 * for new packs, packs no index covers read back from their own headers and indexed (a writer
 * killed between its pack and its index), and compaction of all index objects into a few: one
 * with a location for every blob, and one more for each further pack some blob is also in.
 * Never: a blob's location in a pack that exists dropped by a compaction (only excluded packs'
 * and, for repacking's copies, their old locations).
 */
import { randomBytes } from 'node:crypto';
import { RepositoryObjectCorrupt } from '../../domain/errors.js';
import {
  type BlobLocation,
  decodeIndex,
  EMPTY_SEGMENT,
  encodeIndex,
  type IndexSegment,
  segmentOfPacks,
} from '../../domain/repository/index-segment.js';
import { IndexView } from '../../domain/repository/index-view.js';
import { repositoryKeyId, repositoryKeys } from '../../domain/storage/keys.js';
import type { ObjectStore } from '../../ports/object-store.js';
import { mapBounded } from './bounded.js';
import { readPackHeader } from './pack-io.js';
import { OpenFailed, objectAad, type RepositoryCrypto } from './repository-crypto.js';

const LOAD_CONCURRENCY = 8;
const REBUILD_ATTEMPTS = 5;

export class RepositoryIndex {
  private view = new IndexView();
  private loaded = new Set<string>();
  /** Records of each loaded index object (whether the objects are one compaction's output). */
  private counts = new Map<string, number>();
  /** Packs the index names that the last listing of packs/ lacked (recover): deleted. */
  private gone = new Set<string>();
  private readonly store: ObjectStore;
  private readonly crypto: RepositoryCrypto;

  constructor(options: { store: ObjectStore; crypto: RepositoryCrypto }) {
    this.store = options.store;
    this.crypto = options.crypto;
  }

  lookup(id: string): BlobLocation | undefined {
    return this.view.lookup(id);
  }

  /** Every indexed location of a blob, one a pack, `lookup`'s first. */
  locations(id: string): BlobLocation[] {
    return this.view.locationsOf(id);
  }

  /** Packs an index covers, with their sizes. */
  packs(): ReadonlyMap<string, number> {
    return this.view.packs();
  }

  indexKeys(): readonly string[] {
    return [...this.loaded];
  }

  /**
   * Packs the index names that were missing from packs/ when `recover` listed it: deleted (an
   * index object that landed after its packs were collected). Their locations are no use to a
   * writer or a manifest; reads skip them anyway. Only as fresh as that listing.
   */
  gonePacks(): ReadonlySet<string> {
    return this.gone;
  }

  /** Index objects one compaction would write for the loaded index: one a non-empty level. */
  levelCount(): number {
    return this.view.levels().filter((l) => l.count > 0).length;
  }

  /**
   * Whether the loaded index objects already look like one compaction's output: one object a
   * non-empty level, the largest holding a location for every blob. Rewriting them would change
   * nothing (unless packs are to be excluded or locations preferred).
   */
  isCompacted(): boolean {
    const levels = this.view.levels().filter((l) => l.count > 0);
    if (levels.length !== this.loaded.size) return false;
    const largest = Math.max(0, ...this.counts.values());
    return largest === (levels[0]?.count ?? 0);
  }

  /**
   * One location a blob, merged into one table (GC's inventory): less the excluded packs, which
   * are dropped before a location is chosen, and in a demoted pack only when it has no other.
   */
  merged(options?: { excludePacks?: ReadonlySet<string>; demotePacks?: ReadonlySet<string> }): IndexSegment {
    return this.view.merged(options?.excludePacks, options?.demotePacks);
  }

  /** Every location, as levels (level 0 one a blob, then the blobs' locations in other packs). */
  levels(): IndexSegment[] {
    return this.view.levels();
  }

  private async load(key: string, signal?: AbortSignal): Promise<IndexSegment | undefined> {
    const sealed = await this.store.get(key, { signal });
    if (!sealed) return undefined;
    try {
      return decodeIndex(this.crypto.open(sealed, objectAad('index', repositoryKeyId(key))));
    } catch (error) {
      const reason = error instanceof OpenFailed ? 'fails authentication' : (error as Error).message;
      throw new RepositoryObjectCorrupt(key, reason, { cause: error });
    }
  }

  /**
   * Loads index objects written since the last refresh. An index object that vanished meanwhile
   * was compacted into another: the view is then rebuilt from the current listing.
   */
  async refresh(signal?: AbortSignal): Promise<void> {
    for (let attempt = 0; attempt < REBUILD_ATTEMPTS; attempt++) {
      const keys = await this.store.list(repositoryKeys.indexDir, { signal });
      const listed = new Set(keys);
      const rebuild = [...this.loaded].some((k) => !listed.has(k));
      const wanted = keys.filter((k) => rebuild || !this.loaded.has(k));
      const segments = await mapBounded(wanted, LOAD_CONCURRENCY, (k) => this.load(k, signal));
      if (segments.some((s) => s === undefined)) continue; // compacted while listing: list again
      if (rebuild) {
        this.view = new IndexView();
        this.loaded = new Set();
        this.counts = new Map();
      }
      // Added to the current view, not a copy: an index object this process wrote meanwhile stays.
      segments.forEach((segment, i) => {
        const key = wanted[i] as string;
        if (this.loaded.has(key)) return;
        this.view.add(segment as IndexSegment);
        this.loaded.add(key);
        this.counts.set(key, (segment as IndexSegment).count);
      });
      return;
    }
    throw new RepositoryObjectCorrupt(
      repositoryKeys.indexDir,
      'index objects kept vanishing while being read',
    );
  }

  /** Writes one index object for a segment (after its packs are durable) and adds it here. */
  async write(segment: IndexSegment, signal?: AbortSignal): Promise<string> {
    const indexId = randomBytes(16).toString('hex');
    const key = repositoryKeys.index(indexId);
    await this.store.put(key, this.crypto.seal(encodeIndex(segment), objectAad('index', indexId)), {
      ifNoneMatch: true,
      signal,
    });
    this.view.add(segment);
    this.loaded.add(key);
    this.counts.set(key, segment.count);
    return key;
  }

  /**
   * Indexes packs no index covers (their writer stopped before writing one), skipping `skip`
   * (packs garbage collection condemned), and notes the packs the index names that the listing
   * lacks (`gonePacks`). `beforeWrite` runs right before the index object is written (the
   * writer's lease check: a writer stalled past its lease may be indexing packs a collector has
   * deleted meanwhile). A blob in several orphan packs is indexed at one of them (the others'
   * copies are dead weight a collection removes). Returns the packs indexed.
   */
  async recover(options: {
    skip: ReadonlySet<string>;
    beforeWrite?: (signal?: AbortSignal) => Promise<void>;
    signal?: AbortSignal;
  }): Promise<number> {
    const { signal } = options;
    const covered = this.view.packs();
    const listed = (await this.store.list(repositoryKeys.packsDir, { signal })).map(repositoryKeyId);
    const listedSet = new Set(listed);
    // Listed after the index was loaded, and a pack is uploaded before any index names it: an
    // indexed pack the listing lacks was deleted.
    this.gone = new Set([...covered.keys()].filter((id) => !listedSet.has(id)));
    const orphans = listed.filter(
      (id) => /^[0-9a-f]{32}$/.test(id) && !covered.has(id) && !options.skip.has(id),
    );
    if (orphans.length === 0) return 0;
    const headers = await mapBounded(orphans, LOAD_CONCURRENCY, (packId) =>
      readPackHeader({ store: this.store, crypto: this.crypto, packId, signal }),
    );
    const found = headers.filter((h) => h !== undefined);
    if (found.length === 0) return 0;
    await options.beforeWrite?.(signal);
    await this.write(segmentOfPacks(found), signal);
    return found.length;
  }

  /**
   * Replaces every index object loaded by a few (less `excludePacks`: every location in them is
   * dropped), then deletes the replaced ones. Every other location of a blob is kept, so a blob
   * stays indexed while any of its packs does: level 0 holds one location a blob, each further
   * object the blobs' locations in yet other packs. A blob `prefer` locates keeps that location
   * alone (repacking's copies: the index then names the new pack only, whatever order the objects
   * were loaded in). `check` sees level 0 before anything is written and may name excluded packs
   * to keep after all. Only under the maintenance lock: two compactions at once could resurrect
   * entries. Returns the packs excluded.
   */
  async compact(options: {
    excludePacks?: ReadonlySet<string>;
    prefer?: IndexSegment;
    check?: (next: IndexSegment) => ReadonlySet<string>;
    /** Runs before the first write and before the first delete (the maintenance lock's confirm). */
    confirm?: (signal?: AbortSignal) => Promise<void>;
    signal?: AbortSignal;
  }): Promise<ReadonlySet<string>> {
    const { signal } = options;
    await this.refresh(signal);
    const replaced = [...this.loaded];
    let exclude: ReadonlySet<string> = options.excludePacks ?? new Set<string>();
    const plan = (): IndexSegment[] =>
      this.view.levels({ excludePacks: exclude, ...(options.prefer ? { prefer: options.prefer } : {}) });
    let levels = plan();
    const keep = options.check?.(levels[0] ?? EMPTY_SEGMENT);
    if (keep && keep.size > 0) {
      exclude = new Set([...exclude].filter((p) => !keep.has(p)));
      levels = plan();
    }
    await options.confirm?.(signal);
    const view = new IndexView();
    this.view = view;
    this.loaded = new Set();
    this.counts = new Map();
    const written = levels.filter((l) => l.count > 0);
    if (written.length === 0) view.add(levels[0] ?? EMPTY_SEGMENT);
    // Every new object is written before any replaced one is deleted.
    for (const level of written) await this.write(level, signal);
    if (replaced.length > 0) await options.confirm?.(signal);
    for (const key of replaced) await this.store.delete(key, { signal });
    return exclude;
  }
}
