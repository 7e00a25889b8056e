/** Shared by the repository adapter tests: a real local store in a temp dir, seen through a recorder. */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalDirectoryStore } from '../../../../../shared/adapters/local-directory-store.js';
import { LocalKeyWrapper } from '../../../../../shared/adapters/local-key-wrapper.js';
import {
  type OpenedRepository,
  openRepository,
} from '../../../../../shared/adapters/repository/open-repository.js';
import type { PackWriter } from '../../../../../shared/adapters/repository/pack-writer.js';
import { repositoryKeyId, repositoryKeys } from '../../../../../shared/domain/storage/keys.js';
import type { Clock } from '../../../../../shared/ports/clock.js';
import type { ObjectStore, PutOptions } from '../../../../../shared/ports/object-store.js';
import type { SnapshotManifest } from '../../../../../shared/ports/repository.js';

export const KiB = 1024;

export async function tempStore(): Promise<{ store: LocalDirectoryStore; root: string }> {
  const root = await mkdtemp(join(tmpdir(), 'repo-'));
  return { store: new LocalDirectoryStore(root), root };
}

export const localKey = (): LocalKeyWrapper => new LocalKeyWrapper(new Uint8Array(32).fill(7));

export class TestClock implements Clock {
  constructor(private at = Date.parse('2026-01-01T00:00:00Z')) {}
  now(): Date {
    return new Date(this.at);
  }
  advance(ms: number): void {
    this.at += ms;
  }
}

/** Every call passed to a real store underneath: the base of the tests' recording and stalling stores. */
export class DelegatingStore implements ObjectStore {
  readonly location: string;
  constructor(protected readonly inner: ObjectStore) {
    this.location = inner.location;
  }
  put(k: string, body: Uint8Array | string, options?: PutOptions): Promise<void> {
    return this.inner.put(k, body, options);
  }
  putStream(k: string, body: AsyncIterable<Uint8Array>, options?: PutOptions): Promise<void> {
    return this.inner.putStream(k, body, options);
  }
  get(k: string, options?: { signal?: AbortSignal }): Promise<Uint8Array | undefined> {
    return this.inner.get(k, options);
  }
  getStream(k: string, options?: { signal?: AbortSignal }): Promise<AsyncIterable<Uint8Array> | undefined> {
    return this.inner.getStream(k, options);
  }
  getRange(
    k: string,
    range: { offset: number; length: number },
    options?: { signal?: AbortSignal },
  ): Promise<Uint8Array | undefined> {
    return this.inner.getRange?.(k, range, options) ?? Promise.resolve(undefined);
  }
  exists(k: string, options?: { signal?: AbortSignal }): Promise<boolean> {
    return this.inner.exists(k, options);
  }
  list(prefix: string, options?: { signal?: AbortSignal }): Promise<string[]> {
    return this.inner.list(prefix, options);
  }
  delete(k: string, options?: { signal?: AbortSignal }): Promise<void> {
    return this.inner.delete(k, options);
  }
}

/**
 * A real store underneath; counts pack uploads, and can stop answering index writes (a process
 * killed after uploading its packs and before writing their index).
 */
export class RecordingStore extends DelegatingStore {
  packPuts = 0;
  stopIndexWrites = false;
  /** Each pack upload takes this long (to see how many run at once). */
  packPutDelayMs = 0;
  packPutsInFlight = 0;
  maxPackPutsInFlight = 0;
  override async put(k: string, body: Uint8Array | string, options?: PutOptions): Promise<void> {
    if (k.startsWith(repositoryKeys.indexDir) && this.stopIndexWrites) return new Promise(() => undefined);
    if (!k.startsWith(repositoryKeys.packsDir)) return this.inner.put(k, body, options);
    this.packPuts++;
    this.packPutsInFlight++;
    this.maxPackPutsInFlight = Math.max(this.maxPackPutsInFlight, this.packPutsInFlight);
    try {
      if (this.packPutDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.packPutDelayMs));
      await this.inner.put(k, body, options);
    } finally {
      this.packPutsInFlight--;
    }
  }
  /** Ranged reads of packs, each with the bytes asked for. */
  readonly packRangeReads: number[] = [];
  override getRange(
    k: string,
    range: { offset: number; length: number },
    options?: { signal?: AbortSignal },
  ): Promise<Uint8Array | undefined> {
    if (k.startsWith(repositoryKeys.packsDir)) this.packRangeReads.push(range.length);
    return this.inner.getRange?.(k, range, options) ?? Promise.resolve(undefined);
  }
}

/** A block-mode manifest whose one block-map blob lists `blockMapId`'s blocks. */
export function blockManifest(id: string, blockMapId: string): SnapshotManifest {
  return {
    kind: 'block',
    id,
    createdAt: '2026-01-01T00:00:00.000Z',
    tags: { 'velero.io/backup': id },
    source: { snapshotId: `snap-${id}` },
    volumeSizeBytes: 1024 * 1024,
    blockSizeBytes: 512 * 1024,
    blockMap: [blockMapId],
    stats: { totalBytes: 0, bytesRead: 0, rawBytesStored: 0, storedBytes: 0, blobsDeduplicated: 0 },
  };
}

/** `n` random 8 KiB blocks. */
export const blocks = (n: number): Uint8Array[] => Array.from({ length: n }, () => randomBytes(8 * KiB));

/** Puts the blocks and their block map; flushed, not yet named by a manifest. Returns the map's id. */
export async function putVolume(writer: PackWriter, data: readonly Uint8Array[]): Promise<string> {
  const ids: string[] = [];
  for (const d of data) ids.push((await writer.putBlob(d)).id);
  const map = await writer.putBlob(blockMapBytes(ids));
  await writer.flush();
  return map.id;
}

/** Backs a volume up as one writer session with its manifest. */
export async function backupVolume(
  repo: OpenedRepository,
  id: string,
  data: readonly Uint8Array[],
): Promise<void> {
  const writer = repo.writer();
  const map = await putVolume(writer, data);
  await repo.writeManifest(blockManifest(id, map));
  await writer.close();
}

/** Each pack's size, by pack id. */
export async function packSizes(store: ObjectStore): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const key of await store.list(repositoryKeys.packsDir))
    out.set(repositoryKeyId(key), (await store.get(key))?.length ?? 0);
  return out;
}

/** The bytes of a block-map blob for these blocks. */
export const blockMapBytes = (ids: readonly string[]): Uint8Array =>
  Buffer.from(JSON.stringify(ids.map((id, i) => [i, id])));

/** Compares blobs by SHA-256: a deep equality of large byte arrays is slow. */
export const digest = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** Four 8 KiB blocks fill a pack. A fresh open loads the index objects in the order of their keys. */
export const openSmallPacks = (store: ObjectStore, clock?: Clock): Promise<OpenedRepository> =>
  openRepository({
    store,
    keys: localKey(),
    create: { packTargetBytes: 32 * KiB },
    ...(clock ? { clock, leaseTtlMs: 60_000, clockSkewMs: 1_000 } : {}),
  });

/** The index objects' keys, sorted. */
export const indexKeys = async (store: ObjectStore): Promise<string[]> =>
  (await store.list(repositoryKeys.indexDir)).sort();

/** A real store underneath whose index writes can be held back (a process stalled before its index PUT). */
export class StallingStore extends DelegatingStore {
  private holding = false;
  private held: (() => void)[] = [];
  private arrived: (() => void) | undefined;
  /** Holds the next index writes; resolves once one is waiting. */
  holdIndexWrites(): Promise<void> {
    this.holding = true;
    return new Promise((resolve) => {
      this.arrived = resolve;
    });
  }
  release(): void {
    this.holding = false;
    for (const go of this.held.splice(0)) go();
  }
  override async put(k: string, body: Uint8Array | string, options?: PutOptions): Promise<void> {
    if (this.holding && k.startsWith(repositoryKeys.indexDir)) {
      await new Promise<void>((resolve) => {
        this.held.push(resolve);
        this.arrived?.();
      });
    }
    return this.inner.put(k, body, options);
  }
}
