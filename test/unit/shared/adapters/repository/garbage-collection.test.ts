import { describe, expect, it } from 'vitest';
import {
  type OpenedRepository,
  openRepository,
} from '../../../../../shared/adapters/repository/open-repository.js';
import { BlobMissing, RepositoryBusy } from '../../../../../shared/domain/errors.js';
import {
  type ContentPiece,
  encodeContentList,
  encodeTreeBlob,
} from '../../../../../shared/domain/files/tree.js';
import { repositoryKeys } from '../../../../../shared/domain/storage/keys.js';
import type { ObjectStore } from '../../../../../shared/ports/object-store.js';
import {
  backupVolume as backup,
  blockManifest,
  blocks,
  digest,
  KiB,
  localKey,
  packSizes,
  putVolume,
  tempStore,
} from './support.js';

const open = (store: ObjectStore): Promise<OpenedRepository> =>
  openRepository({ store, keys: localKey(), create: { packTargetBytes: 32 * KiB } });

describe('garbage collection', () => {
  it('deletes exactly the packs only a deleted snapshot used, reports the bytes, and keeps the rest readable', async () => {
    const { store } = await tempStore();
    const repo = await open(store);
    const shared = blocks(3);
    const onlyA = blocks(12);
    const onlyB = blocks(5);
    await backup(repo, 'a', [...onlyA, ...shared]);
    const packsOfA = await packSizes(store);
    await backup(repo, 'b', [...shared, ...onlyB]);
    const before = await packSizes(store);

    await repo.deleteManifest('a');
    const report = await repo.collectGarbage();

    const after = await packSizes(store);
    const deleted = [...before.keys()].filter((p) => !after.has(p));
    // a's blobs went in order, four to a pack: three packs of a's own blocks, then one with the
    // shared blocks and a's block map, which b still uses. Exactly the first three go.
    expect(packsOfA.size).toBe(4);
    expect(deleted).toHaveLength(3);
    for (const p of deleted) expect(packsOfA.has(p)).toBe(true);
    expect(report).toMatchObject({
      liveManifests: 1,
      packsDeleted: deleted.length,
      packsKept: after.size,
      bytesFreed: deleted.reduce((sum, p) => sum + (before.get(p) ?? 0), 0),
    });
    const reader = await open(store);
    for (const b of [...shared, ...onlyB])
      expect(digest(await reader.getBlob(reader.writer().blobId(b)))).toBe(digest(b));
    expect(await reader.verify()).toMatchObject({ problems: [] });
    // Every remaining pack holds a blob of b; a second run finds nothing more to free.
    expect(await reader.collectGarbage()).toMatchObject({
      packsDeleted: 0,
      bytesFreed: 0,
      packsCondemned: 0,
    });
  });

  it('keeps the packs of a backup written while it runs, and deletes once that writer has ended', async () => {
    const { store } = await tempStore();
    const repo = await open(store);
    const onlyA = blocks(8);
    await backup(repo, 'a', onlyA);
    const packsOfA = await packSizes(store);
    await repo.deleteManifest('a');

    // A backup in progress: its packs are uploaded and indexed, its manifest not written yet.
    const writing = await open(store);
    const writer = writing.writer();
    const inProgress = blocks(6);
    const map = await putVolume(writer, inProgress);

    const first = await repo.collectGarbage();
    expect(first).toMatchObject({ packsDeleted: 0, bytesFreed: 0 });
    expect(first.packsWaiting).toBeGreaterThan(packsOfA.size - 1);

    await writing.writeManifest(blockManifest('c', map));
    await writer.close();
    const second = await repo.collectGarbage();
    expect(second.packsDeleted).toBe(packsOfA.size);
    expect(second.packsReprieved).toBeGreaterThan(0);
    const after = await packSizes(store);
    for (const p of packsOfA.keys()) expect(after.has(p)).toBe(false);
    const reader = await open(store);
    for (const b of inProgress)
      expect(digest(await reader.getBlob(reader.writer().blobId(b)))).toBe(digest(b));
    await expect(reader.getBlob(reader.writer().blobId(onlyA[0] as Uint8Array))).rejects.toBeInstanceOf(
      BlobMissing,
    );
  });

  it('lets a writer that loaded a pack before its condemnation use it, and then keeps it', async () => {
    const { store } = await tempStore();
    const repo = await open(store);
    const old = blocks(4);
    await backup(repo, 'a', old);
    await repo.deleteManifest('a');
    const early = await open(store);
    const writer = early.writer();
    await writer.flush(); // lease taken, index loaded: a's packs are deduplicable for this writer

    await repo.collectGarbage(); // condemns a's packs; this writer blocks their deletion
    const map = await putVolume(writer, old);
    expect(writer.stats().blobsDeduplicated).toBe(old.length + 1); // the blocks and the same block map
    await early.writeManifest(blockManifest('d', map));
    await writer.close();

    const report = await repo.collectGarbage();
    expect(report.packsDeleted).toBe(0);
    const reader = await open(store);
    for (const b of old) expect(digest(await reader.getBlob(reader.writer().blobId(b)))).toBe(digest(b));
    expect(await reader.verify()).toMatchObject({ problems: [] });
  });

  it('makes a writer that starts after a condemnation store those blobs again', async () => {
    const { store } = await tempStore();
    const repo = await open(store);
    const old = blocks(4);
    await backup(repo, 'a', old);
    await repo.deleteManifest('a');
    const blocker = (await open(store)).writer();
    await blocker.flush();
    await repo.collectGarbage(); // condemned, not deleted: `blocker` is live

    const late = await open(store);
    const writer = late.writer();
    const map = await putVolume(writer, old);
    expect(writer.stats()).toMatchObject({ blobsDeduplicated: 0, blobsStored: old.length + 1 });
    await late.writeManifest(blockManifest('e', map));
    await writer.close();
    await blocker.close();

    const report = await repo.collectGarbage();
    expect(report.packsDeleted).toBeGreaterThan(0);
    const reader = await open(store);
    for (const b of old) expect(digest(await reader.getBlob(reader.writer().blobId(b)))).toBe(digest(b));
  });

  it('keeps a resumed run from naming blobs of packs condemned before it started', async () => {
    const { store } = await tempStore();
    const repo = await open(store);
    // A run killed before its manifest: its block map and blocks are stored, named by nothing.
    const killed = repo.writer();
    const map = await putVolume(killed, blocks(4));
    await killed.close();
    const blocker = (await open(store)).writer();
    await blocker.flush();
    await repo.collectGarbage(); // condemned; `blocker` keeps them from deletion for now

    // The re-run takes the block map from its checkpoint instead of putting it again.
    const rerun = await open(store);
    const writer = rerun.writer();
    await writer.flush();
    await expect(rerun.writeManifest(blockManifest('resumed', map))).rejects.toThrow(/condemned its pack/);
    await writer.close();
    await blocker.close();
  });

  it('runs one at a time', async () => {
    const { store } = await tempStore();
    const repo = await open(store);
    await store.put(
      repositoryKeys.gcLock,
      JSON.stringify({
        owner: 'ab'.repeat(16),
        purpose: 'garbage collection',
        expiresAt: '2999-01-01T00:00:00Z',
      }),
    );
    await expect(repo.collectGarbage()).rejects.toBeInstanceOf(RepositoryBusy);
  });
});

describe('garbage collection of file-mode snapshots', () => {
  const owner = { uid: 0, gid: 0, mtimeNs: '0' };

  /** A root with one file inline and a subdirectory whose file lists its pieces in a content list. */
  async function fileSnapshot(
    repo: OpenedRepository,
    id: string,
    chunks: readonly Uint8Array[],
  ): Promise<void> {
    const writer = repo.writer();
    const pieces: ContentPiece[] = [];
    let offset = 0;
    for (const c of chunks) {
      pieces.push([offset, c.length, (await writer.putBlob(c)).id]);
      offset += c.length;
    }
    const half = Math.floor(pieces.length / 2);
    const list = await writer.putBlob(
      encodeContentList(pieces.slice(half).map(([o, l, b]) => [o - (pieces[half]?.[0] ?? 0), l, b])),
    );
    const sub = await writer.putBlob(
      encodeTreeBlob({
        entries: [
          {
            ...owner,
            name: 'big',
            type: 'file',
            mode: 0o644,
            size: offset - (pieces[half]?.[0] ?? 0),
            contentLists: [list.id],
          },
        ],
      }),
    );
    const root = await writer.putBlob(
      encodeTreeBlob({
        directory: { ...owner, mode: 0o755 },
        entries: [
          {
            ...owner,
            name: 'a',
            type: 'file',
            mode: 0o644,
            size: pieces[half]?.[0] ?? 0,
            content: pieces.slice(0, half),
          },
          { ...owner, name: 'sub', type: 'dir', mode: 0o755, tree: sub.id },
        ],
      }),
    );
    await writer.flush();
    await repo.writeManifest({
      kind: 'file',
      id,
      createdAt: '2026-01-01T00:00:00.000Z',
      tags: {},
      root: root.id,
      stats: {
        totalBytes: offset,
        bytesRead: offset,
        rawBytesStored: 0,
        storedBytes: 0,
        blobsDeduplicated: 0,
      },
    });
    await writer.close();
  }

  it('follows trees, pages and content lists with file mode’s reader, and frees what only the deleted snapshot used', async () => {
    const { store } = await tempStore();
    const repo = await open(store);
    const kept = blocks(8);
    const gone = blocks(12);
    await fileSnapshot(repo, 'kept', kept);
    const before = await packSizes(store);
    await fileSnapshot(repo, 'gone', gone);
    await repo.deleteManifest('gone');

    const report = await repo.collectGarbage();

    expect(report.liveManifests).toBe(1);
    expect(report.blobsLive).toBe(8 + 3);
    expect(report.packsDeleted).toBeGreaterThanOrEqual(3);
    const after = await packSizes(store);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    const reader = await open(store);
    for (const c of kept) expect(digest(await reader.getBlob(reader.writer().blobId(c)))).toBe(digest(c));
  });
});
