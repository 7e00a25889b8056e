import { createHash, randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalKeyWrapper } from '../../../../../shared/adapters/local-key-wrapper.js';
import { openRepository } from '../../../../../shared/adapters/repository/open-repository.js';
import { COMPACT_AT_INDEX_OBJECTS } from '../../../../../shared/adapters/repository/repository-session.js';
import {
  BlobCorrupt,
  BlobMissing,
  RepositoryFormatUnsupported,
  RepositoryLeaseLost,
} from '../../../../../shared/domain/errors.js';
import { repositoryKeys } from '../../../../../shared/domain/storage/keys.js';
import type { Repository } from '../../../../../shared/ports/repository.js';
import {
  blockManifest,
  blockMapBytes,
  digest,
  KiB,
  localKey as key,
  RecordingStore,
  TestClock,
  tempStore,
} from './support.js';

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
      expect(digest(await reopened.getBlob(writes[i]?.id ?? ''))).toBe(digest(b));
    // Compressible blobs are stored smaller; random ones are stored as they are (plus the seal).
    expect(writes[1]?.storedBytes).toBeLessThan(KiB);
    expect(writes[0]?.storedBytes).toBe(16 * KiB + 28);
  });

  it('getBlobs reads blobs side by side in a pack with one request, in the order asked', async () => {
    const { store: inner } = await tempStore();
    const repo = await openRepository({
      store: inner,
      keys: key(),
      create: { packTargetBytes: 256 * KiB },
    });
    const writer = repo.writer();
    const blobs = Array.from({ length: 24 }, (_, i) =>
      i % 3 === 0 ? randomBytes(32 * KiB) : new Uint8Array(32 * KiB).fill(i),
    );
    const ids: string[] = [];
    for (const b of blobs) ids.push((await writer.putBlob(b)).id);
    await writer.flush();
    await writer.close();
    const packs = (await inner.list(repositoryKeys.packsDir)).length;
    expect(packs).toBeGreaterThan(1);

    const store = new RecordingStore(inner);
    const reader = await openRepository({ store, keys: key() });
    // In write order: one request per pack.
    const all = await reader.getBlobs(ids);
    expect(all.map(digest)).toEqual(blobs.map(digest));
    expect(store.packRangeReads).toHaveLength(packs);

    // Any order, one id twice: the answer follows the question.
    const asked = [ids[5], ids[0], ids[23], ids[5], ids[12]].map((id) => id ?? '');
    const answer = await reader.getBlobs(asked);
    expect(answer.map(digest)).toEqual([5, 0, 23, 5, 12].map((i) => digest(blobs[i] ?? new Uint8Array())));

    await expect(reader.getBlobs([ids[1] ?? '', 'ab'.repeat(32)])).rejects.toBeInstanceOf(BlobMissing);
    expect(await reader.getBlobs([])).toEqual([]);
  });

  it('deduplicates within a writer and across writers and opens', async () => {
    const { store: inner } = await tempStore();
    const store = new RecordingStore(inner);
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
    const repo: Repository = await openRepository({ store, keys: key() });
    const writer = repo.writer();
    const block = await writer.putBlob(Buffer.from('block zero'));
    const map = await writer.putBlob(blockMapBytes([block.id]));
    await writer.flush();
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
    await writer.close?.();
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

describe('integrity', () => {
  it('verify names a blob whose stored bytes changed, and getBlob refuses it', async () => {
    const { store, root } = await tempStore();
    const repo = await openRepository({ store, keys: key() });
    const writer = repo.writer();
    const good = await writer.putBlob(randomBytes(4 * KiB));
    const bad = await writer.putBlob(randomBytes(4 * KiB));
    await writer.flush();
    await writer.close();
    expect(await repo.verify()).toMatchObject({ blobsChecked: 2, bytesChecked: 8 * KiB, problems: [] });

    const [packKey] = await store.list(repositoryKeys.packsDir);
    const path = join(root, packKey ?? '');
    const bytes = await readFile(path);
    // The second record is the pack's last 4 KiB + 28 bytes: flip a byte in its middle.
    bytes[bytes.length - 2 * KiB] = (bytes[bytes.length - 2 * KiB] ?? 0) ^ 0x01;
    await writeFile(path, bytes);

    const report = await repo.verify();
    expect(report.blobsChecked).toBe(2);
    expect(report.problems).toHaveLength(1);
    expect(report.problems[0]).toContain(bad.id);
    expect(report.badBlobs).toEqual([bad.id]);
    await expect(repo.getBlob(bad.id)).rejects.toBeInstanceOf(BlobCorrupt);
    expect((await repo.getBlob(good.id)).length).toBe(4 * KiB);
    // Read together (one request), the good one does not hide the bad one.
    await expect(repo.getBlobs([good.id, bad.id])).rejects.toBeInstanceOf(BlobCorrupt);
    expect((await repo.getBlobs([good.id]))[0]?.length).toBe(4 * KiB);
  });

  it('getBlobs reads a blob stored twice from its good copy when the other is corrupt', async () => {
    // Two writers that do not see each other store the same blob: one copy in each of two packs.
    const { store, root } = await tempStore();
    const data = randomBytes(8 * KiB);
    const writers = [(await openRepository({ store, keys: key() })).writer()];
    writers.push((await openRepository({ store, keys: key() })).writer());
    for (const w of writers) await w.putBlob(data);
    for (const w of writers) await w.flush();
    for (const w of writers) await w.close();
    const id = writers[0]?.blobId(data) ?? '';
    const packs = await store.list(repositoryKeys.packsDir);
    expect(packs).toHaveLength(2);
    const flip = async (pack: string): Promise<Buffer> => {
      const path = join(root, pack);
      const before = await readFile(path);
      const bytes = Buffer.from(before);
      // The record is the pack's last 8 KiB + 28 bytes.
      bytes[bytes.length - 2 * KiB] = (bytes[bytes.length - 2 * KiB] ?? 0) ^ 0x01;
      await writeFile(path, bytes);
      return before;
    };
    // Each copy corrupt in turn: whichever location is tried first, the data comes back.
    for (const pack of packs) {
      const original = await flip(pack);
      const reader = await openRepository({ store, keys: key() });
      expect((await reader.getBlobs([id])).map(digest)).toEqual([digest(data)]);
      await writeFile(join(root, pack), original);
    }
    // Both corrupt: refused.
    for (const pack of packs) await flip(pack);
    const reader = await openRepository({ store, keys: key() });
    await expect(reader.getBlobs([id])).rejects.toBeInstanceOf(BlobCorrupt);
  });

  it('a blob put with its SHA-256 gets the id its bytes give, and is read back checked', async () => {
    const { store } = await tempStore();
    const repo = await openRepository({ store, keys: key() });
    const writer = repo.writer();
    const data = randomBytes(8 * KiB);
    const sha256 = createHash('sha256').update(data).digest();
    const put = await writer.putBlob(data, { sha256 });
    expect(put.id).toBe(writer.blobId(data));
    expect((await writer.putBlob(data)).stored).toBe(false);
    await expect(writer.putBlob(data, { sha256: sha256.subarray(0, 16) })).rejects.toThrow(/32 bytes/);
    await writer.flush();
    await writer.close();
    expect(digest(await repo.getBlob(put.id))).toBe(digest(data));
  });

  it('a blob id is keyed: another repository gives the same data another id', async () => {
    const one = await openRepository({ store: (await tempStore()).store, keys: key() });
    const two = await openRepository({ store: (await tempStore()).store, keys: key() });
    const data = Buffer.from('the same bytes');
    expect(one.writer().blobId(data)).not.toBe(two.writer().blobId(data));
    expect(one.writer().blobId(data)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses to open with a key other than the one that wraps its data key', async () => {
    const { store } = await tempStore();
    await openRepository({ store, keys: key() });
    await expect(
      openRepository({ store, keys: new LocalKeyWrapper(new Uint8Array(32).fill(8)) }),
    ).rejects.toThrow(/does not unwrap/);
  });
});

describe('writer sessions', () => {
  it('write no index once their lease lapsed: flush refuses instead', async () => {
    const { store } = await tempStore();
    const clock = new TestClock();
    const repo = await openRepository({ store, keys: key(), clock, leaseTtlMs: 60_000 });
    const writer = repo.writer();
    await writer.putBlob(randomBytes(4 * KiB));
    const before = await store.list(repositoryKeys.indexDir);
    clock.advance(61_000);
    await expect(writer.flush()).rejects.toBeInstanceOf(RepositoryLeaseLost);
    expect(await store.list(repositoryKeys.indexDir)).toEqual(before);
    await writer.close();
  });

  it('refuse a manifest once a writer lost its lease', async () => {
    const { store } = await tempStore();
    const clock = new TestClock();
    const repo = await openRepository({ store, keys: key(), clock, leaseTtlMs: 60_000 });
    const writer = repo.writer();
    const map = await writer.putBlob(blockMapBytes([]));
    await writer.flush();
    clock.advance(61_000);
    await expect(repo.writeManifest(blockManifest('late', map.id))).rejects.toBeInstanceOf(
      RepositoryLeaseLost,
    );
    await writer.close();
  });

  it('refuse a manifest that names a blob no index holds', async () => {
    const { store } = await tempStore();
    const repo = await openRepository({ store, keys: key() });
    const writer = repo.writer();
    const map = await writer.putBlob(blockMapBytes([]));
    // Not flushed: the blob is in the writer's open pack only.
    await expect(repo.writeManifest(blockManifest('early', map.id))).rejects.toBeInstanceOf(BlobMissing);
    await writer.close();
  });

  it('refuse a manifest once their writer is closed', async () => {
    const { store } = await tempStore();
    const repo = await openRepository({ store, keys: key() });
    const writer = repo.writer();
    const block = await writer.putBlob(Buffer.from('block'));
    const map = await writer.putBlob(blockMapBytes([block.id]));
    await writer.flush();
    await writer.close();
    await expect(repo.writeManifest(blockManifest('after-close', map.id))).rejects.toThrow(
      /written while its writer is open/,
    );
  });

  it('refuse a manifest whose block map lists a blob no index holds', async () => {
    const { store } = await tempStore();
    const repo = await openRepository({ store, keys: key() });
    const writer = repo.writer();
    const map = await writer.putBlob(blockMapBytes(['ab'.repeat(32)]));
    await writer.flush();
    await expect(repo.writeManifest(blockManifest('dangling', map.id))).rejects.toBeInstanceOf(BlobMissing);
    await writer.close();
  });

  it('name the field of a manifest that is not valid', async () => {
    const { store } = await tempStore();
    const repo = await openRepository({ store, keys: key() });
    await expect(repo.writeManifest(blockManifest('../escape', 'ab'.repeat(32)))).rejects.toThrow(
      /manifest\.id: expected 1-200 letters/,
    );
  });

  it('stop at an aborted signal, and take no further blob', async () => {
    const { store } = await tempStore();
    const repo = await openRepository({ store, keys: key() });
    const writer = repo.writer();
    const controller = new AbortController();
    controller.abort();
    await expect(writer.putBlob(randomBytes(KiB), { signal: controller.signal })).rejects.toThrow(/abort/i);
    await writer.close();
  });

  it('upload at most uploadConcurrency packs at once, however many callers put blobs', async () => {
    const { store: inner } = await tempStore();
    const store = new RecordingStore(inner);
    store.packPutDelayMs = 20;
    const repo = await openRepository({
      store,
      keys: key(),
      create: { packTargetBytes: 16 * KiB },
      uploadConcurrency: 2,
    });
    const writer = repo.writer();
    const blobs = Array.from({ length: 64 }, () => randomBytes(8 * KiB));
    await Promise.all(blobs.map((b) => writer.putBlob(b)));
    await writer.flush();
    await writer.close();
    expect(store.packPuts).toBe(32); // two 8 KiB blobs fill a 16 KiB pack: the target holds
    expect(store.maxPackPutsInFlight).toBe(2);
    expect(writer.stats()).toMatchObject({ blobsStored: 64, packsWritten: store.packPuts });
  });

  it('keep memory bounded: a blob over the limit is refused by name', async () => {
    const { store } = await tempStore();
    const repo = await openRepository({ store, keys: key(), create: { maxBlobBytes: 4 * KiB } });
    await expect(repo.writer().putBlob(new Uint8Array(4 * KiB + 1))).rejects.toThrow(
      /larger than the repository's limit/,
    );
  });
});

describe('index objects', () => {
  it('are merged into one by a writer that finds many, and every blob stays found', async () => {
    const { store } = await tempStore();
    const repo = await openRepository({ store, keys: key() });
    const ids: string[] = [];
    for (let i = 0; i < COMPACT_AT_INDEX_OBJECTS + 1; i++) {
      const writer = repo.writer();
      ids.push((await writer.putBlob(Buffer.from(`blob ${i}`))).id);
      await writer.flush();
      await writer.close();
    }
    expect(await store.list(repositoryKeys.indexDir)).toHaveLength(COMPACT_AT_INDEX_OBJECTS + 1);

    const next = (await openRepository({ store, keys: key() })).writer();
    await next.flush();
    await next.close();

    expect(await store.list(repositoryKeys.indexDir)).toHaveLength(1);
    const reader = await openRepository({ store, keys: key() });
    for (const [i, id] of ids.entries())
      expect(Buffer.from(await reader.getBlob(id)).toString()).toBe(`blob ${i}`);
  });
});
