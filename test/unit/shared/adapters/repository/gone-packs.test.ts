/**
 * Index locations in packs that are gone (an index object that landed after a collector deleted
 * its packs: its writer stalled past its lease between the lease check and the PUT), and index
 * objects that are already one compaction's output.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { OpenedRepository } from '../../../../../shared/adapters/repository/open-repository.js';
import type { PackWriter } from '../../../../../shared/adapters/repository/pack-writer.js';
import { BlobMissing } from '../../../../../shared/domain/errors.js';
import { repositoryKeys } from '../../../../../shared/domain/storage/keys.js';
import type { ObjectStore, PutOptions } from '../../../../../shared/ports/object-store.js';
import {
  blockManifest,
  blockMapBytes,
  DelegatingStore,
  digest,
  indexKeys,
  KiB,
  openSmallPacks,
  StallingStore,
  TestClock,
  tempStore,
} from './support.js';

const open = openSmallPacks;

/**
 * Block `x` stored by a writer that stalled before its index PUT; its lease ran out, a collector
 * deleted its (then unindexed) pack, and the index object landed afterwards: the index places
 * `x` in a pack that is gone.
 */
async function goneLocation(
  beforeLanding?: (store: ObjectStore, clock: TestClock) => Promise<void>,
): Promise<{
  store: ObjectStore;
  clock: TestClock;
  x: Uint8Array;
}> {
  const { store } = await tempStore();
  const clock = new TestClock();
  const x = randomBytes(8 * KiB);
  const stalling = new StallingStore(store);
  const stalled = (await open(stalling, clock)).writer();
  await stalled.putBlob(x);
  const held = stalling.holdIndexWrites();
  const flushing = stalled.flush().catch((e: unknown) => e);
  await held; // past its lease check, before the index PUT
  clock.advance(62_000);
  expect((await (await open(store, clock)).collectGarbage()).packsDeleted).toBe(1);
  await beforeLanding?.(store, clock);
  stalling.release();
  expect(String(await flushing)).toMatch(/lease/i);
  await stalled.close();
  expect(await indexKeys(store)).toHaveLength(1); // it landed, naming the deleted pack
  return { store, clock, x };
}

describe('a blob the index places only in a pack that is gone', () => {
  it('is not deduplicated against: a writer stores it again, and it reads back', async () => {
    const { store, clock, x } = await goneLocation();
    const repo = await open(store, clock);
    const writer = repo.writer();
    const put = await writer.putBlob(x);
    expect(put.stored).toBe(true);
    const map = await writer.putBlob(blockMapBytes([put.id]));
    await writer.flush();
    await repo.writeManifest(blockManifest('m', map.id));
    await writer.close();
    const reader = await open(store, clock);
    expect(digest(await reader.getBlob(put.id))).toBe(digest(x));
    expect(await (await open(store, clock)).collectGarbage()).toMatchObject({ problems: [] });
    expect(await (await open(store, clock)).verify()).toMatchObject({ problems: [] });
  });

  it('may not be named by a manifest of a writer that knows its pack is gone', async () => {
    const { store, clock, x } = await goneLocation();
    const repo = await open(store, clock);
    const writer = repo.writer();
    const id = writer.blobId(x);
    // A block map naming x, as a resumed run's checkpoint would, without putting x itself.
    const map = await writer.putBlob(blockMapBytes([id]));
    await writer.flush();
    await expect(repo.writeManifest(blockManifest('m', map.id))).rejects.toBeInstanceOf(BlobMissing);
    await writer.close();
  });

  it('is reported by garbage collection when a manifest names it anyway', async () => {
    // A writer started after the pack was deleted but before the index object landed: its start
    // did not see the pack at all, so it does not know it is gone.
    let late: { repo: OpenedRepository; writer: PackWriter } | undefined;
    const { store, clock, x } = await goneLocation(async (s, c) => {
      const repo = await open(s, c);
      const writer = repo.writer();
      await writer.flush();
      late = { repo, writer };
    });
    if (!late) throw new Error('the late writer did not start');
    const id = late.writer.blobId(x);
    // A block map naming x, as a resumed run's checkpoint would: the manifest check finds x in
    // the landed index object and lets it through.
    const map = await late.writer.putBlob(blockMapBytes([id]));
    await late.writer.flush();
    await late.repo.writeManifest(blockManifest('m', map.id));
    await late.writer.close();
    const run = await (await open(store, clock)).collectGarbage();
    expect(run.problems).toEqual([`live blob ${id}: a manifest names it, but no existing pack holds it`]);
  });
});

/** Fails every index write: a writer killed between its pack and its index object. */
class NoIndexStore extends DelegatingStore {
  override async put(k: string, body: Uint8Array | string, options?: PutOptions): Promise<void> {
    if (k.startsWith(repositoryKeys.indexDir)) throw new Error('killed before its index');
    return this.inner.put(k, body, options);
  }
}

/** Holds pack reads after they returned (a process stalled between reading a pack and using it). */
class SlowPackReads extends DelegatingStore {
  private held: (() => void)[] = [];
  private arrived: (() => void) | undefined;
  readonly reading = new Promise<void>((resolve) => {
    this.arrived = resolve;
  });
  release(): void {
    for (const go of this.held.splice(0)) go();
  }
  private async stall<T>(k: string, read: Promise<T>): Promise<T> {
    const result = await read;
    if (k.startsWith(repositoryKeys.packsDir))
      await new Promise<void>((resolve) => {
        this.held.push(resolve);
        this.arrived?.();
      });
    return result;
  }
  override get(k: string, options?: { signal?: AbortSignal }): Promise<Uint8Array | undefined> {
    return this.stall(k, this.inner.get(k, options));
  }
  override getRange(
    k: string,
    range: { offset: number; length: number },
    options?: { signal?: AbortSignal },
  ): Promise<Uint8Array | undefined> {
    return this.stall(k, super.getRange(k, range, options));
  }
}

describe("a writer's recovery of orphan packs", () => {
  it('checks its lease before writing the index object: stalled past it, it writes nothing', async () => {
    const { store } = await tempStore();
    const clock = new TestClock();
    const x = randomBytes(8 * KiB);
    const killed = (await open(new NoIndexStore(store), clock)).writer();
    await killed.putBlob(x);
    await expect(killed.flush()).rejects.toThrow(/killed/);
    await killed.close();

    // A writer's start reads the orphan's header, then stalls past its lease.
    const slow = new SlowPackReads(store);
    const recovering = (await open(slow, clock)).writer();
    const starting = recovering.flush().catch((e: unknown) => e);
    await slow.reading;
    clock.advance(62_000);
    expect((await (await open(store, clock)).collectGarbage()).packsDeleted).toBe(1);
    slow.release();
    expect(String(await starting)).toMatch(/lease/i);
    await recovering.close();
    expect(await indexKeys(store)).toEqual([]); // no index object names the deleted orphan

    const repo = await open(store, clock);
    const writer = repo.writer();
    expect((await writer.putBlob(x)).stored).toBe(true);
    await writer.flush();
    await writer.close();
  });
});

describe('index objects already one compaction’s output', () => {
  /** `copies` first backups at once, each storing `common`: it ends up in `copies` packs. */
  async function duplicated(copies: number): Promise<ObjectStore> {
    const { store } = await tempStore();
    const common = randomBytes(4 * KiB);
    const repos = await Promise.all(Array.from({ length: copies }, () => open(store)));
    const writers = repos.map((r) => r.writer());
    const maps: string[] = [];
    for (const w of writers) {
      const a = await w.putBlob(common);
      const b = await w.putBlob(randomBytes(4 * KiB));
      maps.push((await w.putBlob(blockMapBytes([a.id, b.id]))).id);
    }
    for (const [i, w] of writers.entries()) {
      await w.flush();
      await (repos[i] as OpenedRepository).writeManifest(blockManifest(`m${i}`, maps[i] as string));
      await w.close();
    }
    return store;
  }

  it('are left alone by idle garbage collection runs', async () => {
    const store = await duplicated(2);
    const first = await (await open(store)).collectGarbage();
    expect(first.problems).toEqual([]);
    const compacted = await indexKeys(store);
    expect(compacted).toHaveLength(2); // every blob, then the common block's second copy
    for (let run = 0; run < 2; run++) {
      expect(await (await open(store)).collectGarbage()).toMatchObject({ packsDeleted: 0, problems: [] });
      expect(await indexKeys(store)).toEqual(compacted);
    }
    expect(await (await open(store)).verify()).toMatchObject({ problems: [] });
  });

  it("are not compacted by a writer's start when a blob's copies are what makes them many", async () => {
    // 34 index objects, more than 32; but the common block is in 34 packs, so a compaction would
    // write 34 objects again (one a level): writers' starts leave them alone.
    const store = await duplicated(34); // 34 levels: compacted at more than 32 + 33
    const before = await indexKeys(store);
    expect(before).toHaveLength(34);
    for (let start = 0; start < 2; start++) {
      const writer = (await open(store)).writer();
      await writer.flush();
      await writer.close();
      expect(await indexKeys(store)).toEqual(before);
    }
  });
});
