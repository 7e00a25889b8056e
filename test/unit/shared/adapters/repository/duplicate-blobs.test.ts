import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openFormat } from '../../../../../shared/adapters/repository/format-object.js';
import type { OpenedRepository } from '../../../../../shared/adapters/repository/open-repository.js';
import type { PackWriter } from '../../../../../shared/adapters/repository/pack-writer.js';
import {
  COMPACT_AT_INDEX_OBJECTS,
  RepositorySession,
} from '../../../../../shared/adapters/repository/repository-session.js';
import { repositoryKeys } from '../../../../../shared/domain/storage/keys.js';
import type { ObjectStore } from '../../../../../shared/ports/object-store.js';
import {
  backupVolume as backup,
  blockManifest,
  blocks,
  digest,
  indexKeys,
  KiB,
  localKey,
  openSmallPacks,
  putVolume,
  StallingStore,
  TestClock,
  tempStore,
} from './support.js';

const open = openSmallPacks;

/**
 * Block `shared` is in backup a's pack P, which garbage collection condemned while `blocker` ran.
 * A writer started after the condemnation (`late`) stores the block again, in a pack Q of its own,
 * and has not written its manifest yet. Two index objects then name the block: `older` at P,
 * `newer` at Q. `order` says which of them a fresh open loads last (its keys sort last), so a
 * merge of the two keeps that one's location. Index object ids are random: the scenario is built
 * again until the keys fall in the order asked for (each try has even odds).
 */
async function blobInTwoPacks(order: 'P last' | 'Q last'): Promise<{
  store: ObjectStore;
  shared: Uint8Array;
  /** Keys of backup a's packs. */
  packsOfA: string[];
  blocker: PackWriter;
  late: OpenedRepository;
  lateWriter: PackWriter;
  lateMap: string;
}> {
  for (let attempt = 0; attempt < 64; attempt++) {
    const { store } = await tempStore();
    const repo = await open(store);
    const shared = randomBytes(8 * KiB);
    await backup(repo, 'a', [shared, ...blocks(3)]);
    const packsOfA = await store.list(repositoryKeys.packsDir); // P and the block map's pack
    await backup(repo, 'k', blocks(4));
    await repo.deleteManifest('a');
    const blocker = (await open(store)).writer();
    await blocker.flush();
    await repo.collectGarbage(); // condemns a's packs; `blocker` keeps them; the index becomes one object
    const [older] = await indexKeys(store);

    const late = await open(store);
    const lateWriter = late.writer();
    const lateMap = await putVolume(lateWriter, [shared, ...blocks(2)]);
    expect(lateWriter.stats()).toMatchObject({ blobsDeduplicated: 0 }); // its packs are condemned
    const newer = (await indexKeys(store)).find((k) => k !== older);
    if (older === undefined || newer === undefined) throw new Error('expected two index objects');
    if (order === 'P last' ? older > newer : newer > older)
      return { store, shared, packsOfA, blocker, late, lateWriter, lateMap };
    await lateWriter.close();
    await blocker.close();
  }
  throw new Error(`index keys never fell in the order ${order}`);
}

/** The repository's id of `data`, through a writer closed at once (so it leaves no lease behind). */
async function blobIdOf(repo: Awaited<ReturnType<typeof open>>, data: Uint8Array): Promise<string> {
  const writer = repo.writer();
  const id = writer.blobId(data);
  await writer.close?.();
  return id;
}

/** A's packs are gone; the block reads back, verify is clean, and later runs keep it so. */
async function expectBlockKept(setup: Awaited<ReturnType<typeof blobInTwoPacks>>): Promise<void> {
  const { store, shared } = setup;
  for (const key of setup.packsOfA) expect(await store.exists(key)).toBe(false);
  const reader = await open(store);
  const id = await blobIdOf(reader, shared);
  expect(digest(await reader.getBlob(id))).toBe(digest(shared));
  expect(await reader.verify()).toMatchObject({ problems: [] });
  // No lease is left: a collection that wrongly condemned the copy would delete it, not wait.
  expect(await store.list(repositoryKeys.leasesDir)).toEqual([]);
  expect(await (await open(store)).collectGarbage()).toMatchObject({ problems: [] });
  expect(await (await open(store)).collectGarbage()).toMatchObject({ packsDeleted: 0, problems: [] });
  const after = await open(store);
  expect(digest(await after.getBlob(id))).toBe(digest(shared));
  expect(await after.verify()).toMatchObject({ problems: [] });
}

/** The late writer names the block in its manifest (its own view still places it in Q). */
async function finishLateBackup(setup: Awaited<ReturnType<typeof blobInTwoPacks>>): Promise<void> {
  await setup.late.writeManifest(blockManifest('late', setup.lateMap));
  await setup.lateWriter.close();
}

describe('a blob stored again after its pack was condemned', () => {
  for (const order of ['P last', 'Q last'] as const) {
    it(`stays indexed when garbage collection merges its two index objects (${order}) and then deletes the condemned pack`, async () => {
      const setup = await blobInTwoPacks(order);
      // A run while the blocker lives: nothing deleted, the index objects merged. The block keeps
      // both locations: one object with a location for every blob, one with its second location.
      const second = await (await open(setup.store)).collectGarbage();
      expect(second.packsDeleted).toBe(0);
      expect(await indexKeys(setup.store)).toHaveLength(2);
      await setup.blocker.close();
      // The condemned packs go while the late writer has not written its manifest yet: nothing
      // marks the block, and only its location in Q may keep it indexed.
      const third = await (await open(setup.store)).collectGarbage();
      expect(third).toMatchObject({ packsDeleted: setup.packsOfA.length, problems: [] });
      await finishLateBackup(setup);
      await expectBlockKept(setup);
    });

    it(`stays indexed when a writer merges many index objects (${order}) before the condemned pack is deleted`, async () => {
      const setup = await blobInTwoPacks(order);
      const filler = await open(setup.store);
      // The blob is in two packs, so the index has two levels: a writer compacts past 32 + 1 objects.
      while ((await indexKeys(setup.store)).length <= COMPACT_AT_INDEX_OBJECTS + 1) {
        const w = filler.writer();
        await w.putBlob(randomBytes(64));
        await w.flush();
        await w.close();
      }
      const compacting = (await open(setup.store)).writer(); // finds many index objects: merges them
      await compacting.flush();
      await compacting.close();
      expect(await indexKeys(setup.store)).toHaveLength(2);
      await setup.blocker.close();
      const run = await (await open(setup.store)).collectGarbage();
      expect(run).toMatchObject({ packsDeleted: setup.packsOfA.length, problems: [] });
      await finishLateBackup(setup);
      await expectBlockKept(setup);
    });

    it(`is deduplicated against, and may be named by a resumed run, through Q (${order})`, async () => {
      const setup = await blobInTwoPacks(order);
      await setup.lateWriter.close(); // its block map and blocks are indexed, named by no manifest
      const next = await open(setup.store); // loads P's object and Q's in the order asked
      const writer = next.writer();
      await writer.putBlob(setup.shared);
      expect(writer.stats()).toMatchObject({ blobsDeduplicated: 1, blobsStored: 0 });
      // A resumed run names the late writer's block map (in Q), which lists the block: accepted,
      // for the block has a location in a pack no record condemns.
      await writer.flush();
      await next.writeManifest(blockManifest('resumed', setup.lateMap));
      await writer.close();
      await setup.blocker.close();
      const run = await (await open(setup.store)).collectGarbage();
      expect(run).toMatchObject({ packsDeleted: setup.packsOfA.length, problems: [] });
      await expectBlockKept(setup);
    });

    it(`counts for Q, not the condemned P, once a manifest names it (${order}), and P goes`, async () => {
      const setup = await blobInTwoPacks(order);
      await finishLateBackup(setup);
      await setup.blocker.close();
      // The mark finds the block live; it counts for the pack not condemned, so P is deleted
      // rather than reprieved, and the rewritten index names the block in Q.
      const run = await (await open(setup.store)).collectGarbage();
      expect(run).toMatchObject({
        packsDeleted: setup.packsOfA.length,
        packsReprieved: 0,
        problems: [],
      });
      await expectBlockKept(setup);
    });
  }
});

describe('a blob one index object places in a pack that is gone', () => {
  it('is still found, and kept, at its other location', async () => {
    const { store } = await tempStore();
    const clock = new TestClock();
    const shared = randomBytes(8 * KiB);
    // A backup writer that loaded the (empty) index before the stalled writer's pack existed.
    const backingUp = await open(store, clock);
    const writer = backingUp.writer();
    await writer.flush();

    // A writer uploads a pack holding the block, then stalls before writing its index object.
    const stalling = new StallingStore(store);
    const stalled = (await open(stalling, clock)).writer();
    await stalled.putBlob(shared);
    const held = stalling.holdIndexWrites();
    const flushing = stalled.flush();
    await held;

    // The backup stores the same block (it does not know the stalled pack) and names it.
    const map = await putVolume(writer, [shared, ...blocks(2)]);
    await backingUp.writeManifest(blockManifest('b', map));
    await writer.close();

    // The stalled writer's lease runs out: a collector deletes its unindexed pack as dead.
    clock.advance(62_000);
    const first = await (await open(store, clock)).collectGarbage();
    expect(first.packsDeleted).toBe(1);
    const collector = await open(store, clock); // has loaded the index as it is now

    // The writer wakes: its index object lands, naming the deleted pack; its flush fails.
    stalling.release();
    await expect(flushing).rejects.toThrow(/lease/i);
    await stalled.close();

    // The collector loads that object last, so it is the newest location the index has.
    const second = await collector.collectGarbage();
    expect(second.packsDeleted).toBe(0);
    const reader = await open(store, clock);
    const id = await blobIdOf(reader, shared);
    expect(digest(await reader.getBlob(id))).toBe(digest(shared));
    expect(await reader.verify()).toMatchObject({ problems: [] });
  });
});

describe('index compaction', () => {
  it('shows its caller the index it would write, and keeps the excluded packs the caller names', async () => {
    const { store } = await tempStore();
    const repo = await open(store);
    const kept = blocks(4);
    await backup(repo, 'a', kept); // a pack of blocks and one of the block map
    await backup(repo, 'b', blocks(4));
    const { crypto } = await openFormat({ store, keys: localKey(), now: new Date() });
    const session = new RepositorySession({ store, crypto, clock: new TestClock() });
    await session.refresh();
    // Ids from the format's keys, not from writers: a writer starting meanwhile would index the
    // packs the compaction below leaves out (they exist and nothing condemned them).
    const ids = kept.map((k) => crypto.blobId(k));
    const packOfKept = session.index.lookup(ids[0] as string)?.packId as string;
    const all = new Set(session.index.packs().keys());

    let shown = -1;
    const excluded = await session.index.compact({
      excludePacks: all,
      check: (next) => {
        shown = next.count; // every pack excluded: nothing left
        return new Set([packOfKept]);
      },
    });
    expect(shown).toBe(0);
    expect([...excluded].sort()).toEqual([...all].filter((p) => p !== packOfKept).sort());
    const reader = await open(store);
    for (const [i, k] of kept.entries())
      expect(digest(await reader.getBlob(ids[i] as string))).toBe(digest(k));
    expect([...(await reader.verify()).problems]).toEqual([]);
    expect((await reader.verify()).blobsChecked).toBe(kept.length);
  });
});
