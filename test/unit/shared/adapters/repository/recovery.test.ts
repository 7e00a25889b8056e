import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openRepository } from '../../../../../shared/adapters/repository/open-repository.js';
import { repositoryKeys } from '../../../../../shared/domain/storage/keys.js';
import { digest, KiB, localKey, RecordingStore, tempStore } from './support.js';

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('condition not reached');
}

describe('recovery of a writer stopped between its packs and their index', () => {
  it('indexes the orphaned packs on the next open, so the re-run uploads no blob twice', async () => {
    const { store: inner } = await tempStore();
    const store = new RecordingStore(inner);
    const blobs = Array.from({ length: 24 }, () => randomBytes(16 * KiB));
    const repo = await openRepository({
      store,
      keys: localKey(),
      create: { packTargetBytes: 64 * KiB },
      indexEveryPacks: 1000,
    });
    const killed = repo.writer();
    for (const b of blobs) await killed.putBlob(b);
    // Its packs reach the store; its index write never completes (the process is gone).
    store.stopIndexWrites = true;
    void killed.flush();
    await until(async () => (await inner.list(repositoryKeys.packsDir)).length === 6);
    expect(await inner.list(repositoryKeys.indexDir)).toEqual([]);
    store.stopIndexWrites = false;
    const uploadsBefore = store.packPuts;

    const rerun = (await openRepository({ store, keys: localKey() })).writer();
    const extra = Array.from({ length: 4 }, () => randomBytes(16 * KiB));
    for (const b of [...blobs, ...extra]) await rerun.putBlob(b);
    await rerun.flush();
    await rerun.close();

    expect(rerun.stats()).toMatchObject({ blobsStored: 4, blobsDeduplicated: 24, packsWritten: 1 });
    expect(store.packPuts - uploadsBefore).toBe(1);
    const reader = await openRepository({ store, keys: localKey() });
    for (const b of [...blobs, ...extra])
      expect(digest(await reader.getBlob(rerun.blobId(b)))).toBe(digest(b));
    const report = await reader.verify();
    expect(report).toMatchObject({ blobsChecked: 28, problems: [] });
  });
});
