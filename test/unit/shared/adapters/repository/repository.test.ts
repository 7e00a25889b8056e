import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalDirectoryStore } from '../../../../../shared/adapters/local-directory-store.js';
import { LocalKeyWrapper } from '../../../../../shared/adapters/local-key-wrapper.js';
import { openRepository } from '../../../../../shared/adapters/repository/open-repository.js';
import { BlobMissing, RepositoryFormatUnsupported } from '../../../../../shared/domain/errors.js';
import { repositoryKeys } from '../../../../../shared/domain/storage-keys.js';
import type { ObjectStore, PutOptions } from '../../../../../shared/ports/object-store.js';

const KiB = 1024;

async function tempStore(): Promise<{ store: LocalDirectoryStore; root: string }> {
  const root = await mkdtemp(join(tmpdir(), 'repo-'));
  return { store: new LocalDirectoryStore(root), root };
}

const key = (): LocalKeyWrapper => new LocalKeyWrapper(new Uint8Array(32).fill(7));

/** Counts the pack uploads a store receives (a real store underneath). */
class CountingStore implements ObjectStore {
  readonly location: string;
  packPuts = 0;
  constructor(private readonly inner: ObjectStore) {
    this.location = inner.location;
  }
  put(k: string, body: Uint8Array | string, options?: PutOptions): Promise<void> {
    if (k.startsWith(repositoryKeys.packsDir)) this.packPuts++;
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

describe('the pack repository over a local directory', () => {
  it('stores blobs in packs and reads them back, checked', async () => {
    const { store } = await tempStore();
    const repo = await openRepository({ store, keys: key(), create: { packTargetBytes: 64 * KiB } });
    const writer = repo.writer();
    const blobs = Array.from({ length: 20 }, (_, i) =>
      i % 2 === 0 ? randomBytes(16 * KiB) : new Uint8Array(16 * KiB).fill(i),
    );
    const writes = await Promise.all(blobs.map((b) => writer.putBlob(b)));
    await writer.flush();
    await writer.close();
    expect(writes.every((w) => w.stored)).toBe(true);
    expect(writes.map((w) => w.id)).toEqual(blobs.map((b) => writer.blobId(b)));
    const packs = await store.list(repositoryKeys.packsDir);
    expect(packs.length).toBeGreaterThan(1);
    expect(packs.length).toBeLessThan(blobs.length);

    const reopened = await openRepository({ store, keys: key() });
    for (const [i, b] of blobs.entries())
      expect(Buffer.from(await reopened.getBlob(writes[i]?.id ?? ''))).toEqual(Buffer.from(b));
    // Compressible blobs are stored smaller; random ones are stored as they are (plus the seal).
    expect(writes[1]?.storedBytes).toBeLessThan(KiB);
    expect(writes[0]?.storedBytes).toBe(16 * KiB + 28);
  });

  it('deduplicates within a writer and across writers and opens', async () => {
    const { store: inner } = await tempStore();
    const store = new CountingStore(inner);
    const data = randomBytes(40 * KiB);
    const repo = await openRepository({ store, keys: key() });
    const first = repo.writer();
    expect((await first.putBlob(data)).stored).toBe(true);
    expect((await first.putBlob(data)).stored).toBe(false);
    expect(first.has(first.blobId(data))).toBe(true);
    await first.flush();
    await first.close();

    const again = await openRepository({ store, keys: key() });
    const second = again.writer();
    const write = await second.putBlob(data);
    await second.flush();
    await second.close();
    expect(write).toMatchObject({ stored: false, storedBytes: 0 });
    expect(second.stats()).toMatchObject({ blobsStored: 0, blobsDeduplicated: 1, packsWritten: 0 });
    expect(store.packPuts).toBe(1);
  });

  it('reports a blob no pack holds as BlobMissing', async () => {
    const { store } = await tempStore();
    const repo = await openRepository({ store, keys: key() });
    await expect(repo.getBlob('ab'.repeat(32))).rejects.toBeInstanceOf(BlobMissing);
  });

  it('writes each manifest once, reads, lists and deletes it', async () => {
    const { store } = await tempStore();
    const repo = await openRepository({ store, keys: key() });
    const writer = repo.writer();
    const map = await writer.putBlob(Buffer.from(JSON.stringify([])));
    await writer.flush();
    await writer.close();
    const manifest = {
      kind: 'block' as const,
      id: 'snap-1',
      createdAt: '2026-01-01T00:00:00.000Z',
      tags: { 'velero.io/backup': 'b1' },
      source: { snapshotId: 'snap-0123' },
      volumeSizeBytes: 1024,
      blockSizeBytes: 512,
      blockMap: [map.id],
      stats: { totalBytes: 0, bytesRead: 0, rawBytesStored: 0, storedBytes: 0, blobsDeduplicated: 0 },
    };
    await repo.writeManifest(manifest);
    await expect(repo.writeManifest(manifest)).rejects.toThrow(/already exists/);
    expect(await repo.readManifest('snap-1')).toEqual(manifest);
    expect(await repo.listManifests()).toEqual([
      { id: 'snap-1', kind: 'block', createdAt: manifest.createdAt, tags: manifest.tags },
    ]);
    await repo.deleteManifest('snap-1');
    expect(await repo.listManifests()).toEqual([]);
  });

  it('refuses a format version it does not know', async () => {
    const { store, root } = await tempStore();
    await openRepository({ store, keys: key() });
    const path = join(root, repositoryKeys.format);
    const format = JSON.parse(await readFile(path, 'utf8'));
    await writeFile(path, JSON.stringify({ ...format, formatVersion: 2 }));
    await expect(openRepository({ store, keys: key() })).rejects.toBeInstanceOf(RepositoryFormatUnsupported);
  });
});
