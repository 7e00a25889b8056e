import { describe, expect, it } from 'vitest';
import {
  type OpenedRepository,
  openRepository,
} from '../../../../../shared/adapters/repository/open-repository.js';
import { ValidationFailed } from '../../../../../shared/domain/errors.js';
import { PACK_PREFIX_BYTES, packHeaderPlainBytes } from '../../../../../shared/domain/repository/pack.js';
import { repositoryKeys } from '../../../../../shared/domain/storage/keys.js';
import type { Clock } from '../../../../../shared/ports/clock.js';
import type { ObjectStore, PutOptions } from '../../../../../shared/ports/object-store.js';
import {
  blockManifest,
  blockMapBytes,
  blocks,
  digest,
  KiB,
  localKey,
  packSizes,
  TestClock,
  tempStore,
} from './support.js';

/** Four 8 KiB blocks fill a pack. */
const open = (store: ObjectStore, clock?: Clock): Promise<OpenedRepository> =>
  openRepository({
    store,
    keys: localKey(),
    create: { packTargetBytes: 32 * KiB },
    ...(clock ? { clock } : {}),
  });

interface Blob {
  readonly id: string;
  readonly data: Uint8Array;
}

/** A backup as one writer session: blocks, block map, manifest. */
async function backup(repo: OpenedRepository, id: string, data: readonly Uint8Array[]): Promise<Blob[]> {
  const writer = repo.writer();
  const out: Blob[] = [];
  for (const d of data) out.push({ id: (await writer.putBlob(d)).id, data: d });
  const mapBytes = blockMapBytes(out.map((b) => b.id));
  const map = await writer.putBlob(mapBytes);
  await writer.flush();
  await repo.writeManifest(blockManifest(id, map.id));
  await writer.close();
  return [...out, { id: map.id, data: mapBytes }];
}

const sum = (sizes: Map<string, number>): number => [...sizes.values()].reduce((a, b) => a + b, 0);

/**
 * Backups a1, a2, … each fill one pack with a block b keeps and three only they use (plus a pack
 * for their block map); b names the kept blocks. Deleting the a's leaves those packs three
 * quarters dead, and their block-map packs dead.
 */
async function mostlyDead(
  store: ObjectStore,
  count = 2,
): Promise<{
  repo: OpenedRepository;
  /** Everything b needs: its blocks (one from each mostly dead pack) and its block map. */
  live: Blob[];
  /** The mostly dead packs, in the order of b's blocks. */
  mostlyDeadPacks: string[];
  /** Every pack the a's wrote. */
  packsOfA: Set<string>;
}> {
  const repo = await open(store);
  const kept = blocks(count);
  const before = await packSizes(store);
  const mostlyDeadPacks: string[] = [];
  for (const [i, k] of kept.entries()) {
    const was = await packSizes(store);
    await backup(repo, `a${i}`, [k, ...blocks(3)]);
    const fresh = [...(await packSizes(store))].filter(([p]) => !was.has(p)).sort((x, y) => y[1] - x[1]);
    mostlyDeadPacks.push(fresh[0]?.[0] ?? '');
  }
  const afterA = await packSizes(store);
  const b = await backup(repo, 'b', kept);
  for (const i of kept.keys()) await repo.deleteManifest(`a${i}`);
  return {
    repo,
    live: b,
    mostlyDeadPacks,
    packsOfA: new Set([...afterA.keys()].filter((p) => !before.has(p))),
  };
}

/** Every blob reads back as it was, one by one and in one batch, and verify finds nothing wrong. */
async function expectIntact(store: ObjectStore, live: readonly Blob[]): Promise<void> {
  const reader = await open(store);
  for (const b of live) expect(digest(await reader.getBlob(b.id))).toBe(digest(b.data));
  const batch = await reader.getBlobs(live.map((b) => b.id));
  expect(batch.map(digest)).toEqual(live.map((b) => digest(b.data)));
  expect(await reader.verify()).toMatchObject({ problems: [], badBlobs: [] });
}

const nothingToDo = {
  packsRepacked: 0,
  blobsCopied: 0,
  bytesCopied: 0,
  packsDeleted: 0,
  bytesFreed: 0,
  packsCondemned: 0,
  problems: [],
};

describe('repacking partly dead packs', () => {
  it('copies the live blobs of mostly dead packs into a new pack and deletes the old packs in the same run', async () => {
    const { store } = await tempStore();
    const { repo, live, packsOfA } = await mostlyDead(store);
    const before = await packSizes(store);

    const report = await repo.collectGarbage();

    const after = await packSizes(store);
    const deleted = [...before.keys()].filter((p) => !after.has(p));
    const written = [...after.keys()].filter((p) => !before.has(p));
    // The two mostly dead packs and the two block-map packs of a1 and a2: all of a's packs.
    expect(new Set(deleted)).toEqual(packsOfA);
    expect(written).toHaveLength(1);
    const copy = after.get(written[0] as string) as number;
    // The copy holds the two kept blocks, record for record, under a header of two entries.
    const records = 2 * (8 * KiB + 28);
    expect(copy).toBe(PACK_PREFIX_BYTES + packHeaderPlainBytes(2) + 28 + records);
    expect(report).toMatchObject({
      liveManifests: 1,
      packsRepacked: 2,
      blobsCopied: 2,
      bytesCopied: copy,
      packsDeleted: deleted.length,
      bytesFreed: deleted.reduce((n, p) => n + (before.get(p) ?? 0), 0),
      packsKept: after.size,
      packsWaiting: 0,
      problems: [],
    });
    expect(sum(after)).toBe(sum(before) - report.bytesFreed + report.bytesCopied);
    expect(sum(after)).toBeLessThan(sum(before) / 2);
    await expectIntact(store, live);
  });

  it('has nothing left to do on a second run: no blob is copied again', async () => {
    const { store } = await tempStore();
    const { repo } = await mostlyDead(store);
    await repo.collectGarbage();
    const packs = await packSizes(store);

    const again = await repo.collectGarbage();

    expect(again).toMatchObject(nothingToDo);
    expect(await packSizes(store)).toEqual(packs);
  });

  it('keeps a pack whole while its dead bytes are under the threshold, which is an option', async () => {
    const { store } = await tempStore();
    const repo = await open(store);
    const kept = blocks(3);
    const before = await packSizes(store);
    await backup(repo, 'a', [...kept, ...blocks(1)]);
    const full = [...(await packSizes(store))].filter(([p]) => !before.has(p)).sort((x, y) => y[1] - x[1]);
    const [quarterDead] = full[0] ?? [''];
    await backup(repo, 'b', kept);
    await repo.deleteManifest('a');

    // A quarter dead: kept whole at the default of one half (a's block-map pack goes).
    const first = await repo.collectGarbage();
    expect(first).toMatchObject({ packsRepacked: 0, blobsCopied: 0, packsDeleted: 1 });
    expect((await packSizes(store)).has(quarterDead)).toBe(true);

    const second = await repo.collectGarbage({ repackDeadFraction: 0.2 });
    expect(second).toMatchObject({ packsRepacked: 1, blobsCopied: 3, packsDeleted: 1 });
    expect((await packSizes(store)).has(quarterDead)).toBe(false);
  });

  it('refuses a threshold outside (0, 1], naming the option', async () => {
    const { store } = await tempStore();
    const repo = await open(store);
    for (const bad of [0, -0.5, 1.5, Number.NaN]) {
      const error = await repo.collectGarbage({ repackDeadFraction: bad }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationFailed);
      expect((error as ValidationFailed).problems[0]?.path).toBe('repackDeadFraction');
    }
    // 1: nothing with a live blob is ever that dead, so nothing is repacked.
    const { store: other } = await tempStore();
    const { repo: mostly } = await mostlyDead(other);
    expect(await mostly.collectGarbage({ repackDeadFraction: 1 })).toMatchObject({ packsRepacked: 0 });
  });

  it('leaves a pack whole, naming the blob, when one of its live blobs fails its check, and repacks the others', async () => {
    const { store } = await tempStore();
    const { repo, live, mostlyDeadPacks } = await mostlyDead(store);
    const [bad, good] = mostlyDeadPacks as [string, string];
    // The kept block is the first record of its pack: flip a byte inside it.
    const key = repositoryKeys.pack(bad);
    const bytes = Buffer.from((await store.get(key)) as Uint8Array);
    const firstRecord = PACK_PREFIX_BYTES + packHeaderPlainBytes(4) + 28;
    bytes[firstRecord + 100] = (bytes[firstRecord + 100] as number) ^ 0xff;
    await store.put(key, bytes);

    const report = await repo.collectGarbage();

    const corrupt = live[0] as Blob;
    expect(report.problems).toHaveLength(1);
    expect(report.problems[0]).toMatch(new RegExp(`pack ${bad} not repacked.*blob ${corrupt.id} is corrupt`));
    expect(report).toMatchObject({ packsRepacked: 1, blobsCopied: 1 });
    const after = await packSizes(store);
    expect(after.has(bad)).toBe(true);
    expect(after.has(good)).toBe(false);
    // Nothing of the corrupt blob was copied: verify finds it bad where it was, and only there.
    const reader = await open(store);
    const verified = await reader.verify();
    expect(verified.badBlobs).toEqual([corrupt.id]);
    expect(verified.problems).toHaveLength(1);
    for (const b of live.slice(1)) expect(digest(await reader.getBlob(b.id))).toBe(digest(b.data));
  });

  it('keeps the emptied packs while a writer that started before runs, then deletes them without copying again', async () => {
    const { store } = await tempStore();
    const { repo, live, packsOfA } = await mostlyDead(store);
    const running = (await open(store)).writer();
    await running.flush(); // its lease is held and the index loaded

    const first = await repo.collectGarbage();
    expect(first).toMatchObject({ packsRepacked: 2, blobsCopied: 2, packsDeleted: 0, bytesFreed: 0 });
    expect(first.packsWaiting).toBe(packsOfA.size);
    const during = await packSizes(store);
    for (const p of packsOfA) expect(during.has(p)).toBe(true);
    await expectIntact(store, live);

    await running.close();
    const second = await repo.collectGarbage();
    expect(second).toMatchObject({ packsRepacked: 0, blobsCopied: 0, packsDeleted: packsOfA.size });
    const after = await packSizes(store);
    for (const p of packsOfA) expect(after.has(p)).toBe(false);
    await expectIntact(store, live);
    expect(await repo.collectGarbage()).toMatchObject(nothingToDo);
  });

  it('reprieves an emptied pack whose dead blob a running writer deduplicated against, and repacks it later', async () => {
    const { store } = await tempStore();
    const repo = await open(store);
    const [kept, revived, ...rest] = blocks(4) as [Uint8Array, Uint8Array, ...Uint8Array[]];
    await backup(repo, 'a', [kept, revived, ...rest]);
    const b = await backup(repo, 'b', [kept]);
    await repo.deleteManifest('a');
    const early = await open(store);
    const writer = early.writer();
    await writer.flush(); // loaded before the repack: `revived` is there to deduplicate against

    const first = await repo.collectGarbage();
    expect(first).toMatchObject({ packsRepacked: 1, blobsCopied: 1, packsDeleted: 0 });
    const c: Blob[] = [];
    for (const d of [kept, revived]) c.push({ id: (await writer.putBlob(d)).id, data: d });
    expect(writer.stats().blobsDeduplicated).toBe(2);
    const mapBytes = blockMapBytes(c.map((x) => x.id));
    const map = await writer.putBlob(mapBytes);
    await writer.flush();
    await early.writeManifest(blockManifest('c', map.id));
    await writer.close();

    // The writer's manifest uses `revived`, still only in the old pack: reprieved, not deleted.
    const second = await repo.collectGarbage();
    expect(second.packsReprieved).toBe(1);
    const everything = [...b, ...c, { id: map.id, data: mapBytes }];
    await expectIntact(store, everything);
    // Live again and mostly dead: the next run copies `revived` out and deletes it.
    const third = await repo.collectGarbage();
    expect(third).toMatchObject({ packsRepacked: 1, blobsCopied: 1, packsDeleted: 1 });
    await expectIntact(store, everything);
    expect(await repo.collectGarbage()).toMatchObject(nothingToDo);
  });
});

/**
 * A real store that stops its process at a chosen write: that write is made and every later call
 * hangs (the process was killed), or that write fails once (an error the run does not survive).
 */
class StoppingStore implements ObjectStore {
  readonly location: string;
  stopped = false;
  private frozen = false;
  private trap: Trap | undefined;
  constructor(private readonly inner: ObjectStore) {
    this.location = inner.location;
  }
  arm(trap: Trap): void {
    this.trap = { ...trap };
  }
  private hang<T>(): Promise<T> {
    return new Promise<T>(() => undefined);
  }
  private async write(op: 'put' | 'delete', key: string, run: () => Promise<void>): Promise<void> {
    if (this.frozen) return this.hang();
    const trap = this.trap;
    if (trap && trap.op === op && key.startsWith(trap.prefix)) {
      if (trap.skip > 0) trap.skip--;
      else {
        this.trap = undefined;
        this.stopped = true;
        if (trap.mode === 'fail') throw new Error(`injected failure: ${op} ${key}`);
        await run();
        this.frozen = true;
        return this.hang();
      }
    }
    return run();
  }
  put(k: string, body: Uint8Array | string, options?: PutOptions): Promise<void> {
    return this.write('put', k, () => this.inner.put(k, body, options));
  }
  delete(k: string, options?: { signal?: AbortSignal }): Promise<void> {
    return this.write('delete', k, () => this.inner.delete(k, options));
  }
  putStream(k: string, body: AsyncIterable<Uint8Array>, options?: PutOptions): Promise<void> {
    return this.write('put', k, () => this.inner.putStream(k, body, options));
  }
  get(k: string, options?: { signal?: AbortSignal }): Promise<Uint8Array | undefined> {
    return this.frozen ? this.hang() : this.inner.get(k, options);
  }
  getStream(k: string, options?: { signal?: AbortSignal }): Promise<AsyncIterable<Uint8Array> | undefined> {
    return this.frozen ? this.hang() : this.inner.getStream(k, options);
  }
  getRange(
    k: string,
    range: { offset: number; length: number },
    options?: { signal?: AbortSignal },
  ): Promise<Uint8Array | undefined> {
    if (this.frozen) return this.hang();
    return this.inner.getRange?.(k, range, options) ?? Promise.resolve(undefined);
  }
  exists(k: string, options?: { signal?: AbortSignal }): Promise<boolean> {
    return this.frozen ? this.hang() : this.inner.exists(k, options);
  }
  list(prefix: string, options?: { signal?: AbortSignal }): Promise<string[]> {
    return this.frozen ? this.hang() : this.inner.list(prefix, options);
  }
}

interface Trap {
  readonly op: 'put' | 'delete';
  readonly prefix: string;
  /** Matching calls let through first. */
  skip: number;
  readonly mode: 'kill' | 'fail';
}

/** Waits for the collection to reach its trap: generously, a loaded machine may be slow to get there. */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 12_000 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!check()) throw new Error('condition not reached');
}

describe('a garbage collection stopped while repacking', () => {
  const { packsDir, indexDir, condemnedDir, repackedDir } = repositoryKeys;
  // The collector's writes in order: the repack record, the new pack, the index naming the copies
  // alone (then the replaced index objects deleted), the record deleted, the condemnation, its
  // blockers, the index without the old packs, the old packs deleted.
  // A copy not uploaded yet is made again; one uploaded is taken as it is.
  it.each<[string, Omit<Trap, 'mode'>, number]>([
    ['killed once the new pack is recorded', { op: 'put', prefix: repackedDir, skip: 0 }, 2],
    ['killed once the new pack is uploaded', { op: 'put', prefix: packsDir, skip: 0 }, 0],
    ['killed once the index naming the copies is written', { op: 'put', prefix: indexDir, skip: 0 }, 0],
    ['killed while the replaced index objects are deleted', { op: 'delete', prefix: indexDir, skip: 0 }, 0],
    ['killed once the repack record is deleted', { op: 'delete', prefix: repackedDir, skip: 0 }, 0],
    ['killed once the emptied packs are condemned', { op: 'put', prefix: condemnedDir, skip: 0 }, 0],
    ['killed once the index without the old packs is written', { op: 'put', prefix: indexDir, skip: 1 }, 0],
    ['killed once the first old pack is deleted', { op: 'delete', prefix: packsDir, skip: 0 }, 0],
  ])(
    '%s: a re-run loses no blob, leaves verify clean, and finishes the work',
    async (_, trap, copiedAgain) => {
      const { store: inner } = await tempStore();
      const store = new StoppingStore(inner);
      const { repo, live, packsOfA } = await mostlyDead(store);
      store.arm({ ...trap, mode: 'kill' });
      void repo.collectGarbage().catch(() => undefined);
      await until(() => store.stopped);

      // Later, when the dead collector's lock and its copier's lease have expired.
      const later = new TestClock(Date.now() + 3_600_000);
      const rerun = await open(inner, later);
      const report = await rerun.collectGarbage();
      expect(report).toMatchObject({ packsRepacked: copiedAgain, blobsCopied: copiedAgain, problems: [] });
      const packs = await packSizes(inner);
      for (const p of packsOfA) expect(packs.has(p)).toBe(false);
      // b's block-map pack and one copy of the kept blocks: any duplicate copy is gone too.
      expect(packs.size).toBe(2);
      expect(await inner.list(repositoryKeys.repackedDir)).toEqual([]);
      await expectIntact(inner, live);
      expect(await rerun.collectGarbage()).toMatchObject(nothingToDo);
    },
  );

  it('killed between two of its new packs: the next run takes the packs uploaded and copies only the rest', async () => {
    const { store: inner } = await tempStore();
    const store = new StoppingStore(inner);
    // Twelve mostly dead packs: their twelve live blocks fill three new packs of four.
    const { repo, live, packsOfA } = await mostlyDead(store, 12);
    store.arm({ op: 'put', prefix: packsDir, skip: 1, mode: 'kill' });
    void repo.collectGarbage().catch(() => undefined);
    await until(() => store.stopped);

    const rerun = await open(inner, new TestClock(Date.now() + 3_600_000));
    const report = await rerun.collectGarbage();
    expect(report).toMatchObject({ packsRepacked: 4, blobsCopied: 4, packsDeleted: packsOfA.size });
    const packs = await packSizes(inner);
    // The two packs of the stopped run, the one of this run, and b's block map.
    expect(packs.size).toBe(4);
    expect(await inner.list(repositoryKeys.repackedDir)).toEqual([]);
    await expectIntact(inner, live);
    expect(await rerun.collectGarbage()).toMatchObject(nothingToDo);
  });

  // A copy not uploaded is made again; one uploaded is taken as it is.
  it.each<[string, Omit<Trap, 'mode'>, number]>([
    ['the repack record fails to be written', { op: 'put', prefix: repackedDir, skip: 0 }, 2],
    ['the new pack fails to upload', { op: 'put', prefix: packsDir, skip: 0 }, 2],
    ['the index naming the copies fails to be written', { op: 'put', prefix: indexDir, skip: 0 }, 0],
  ])('when %s, the run fails and the next one finishes the work', async (_, trap, copiedAgain) => {
    const { store: inner } = await tempStore();
    const store = new StoppingStore(inner);
    const { repo, live, packsOfA } = await mostlyDead(store);
    store.arm({ ...trap, mode: 'fail' });
    await expect(repo.collectGarbage()).rejects.toThrow(/injected failure/);
    expect(await inner.list(repositoryKeys.leasesDir)).toEqual([]);

    const report = await repo.collectGarbage();
    expect(report).toMatchObject({ packsRepacked: copiedAgain, blobsCopied: copiedAgain, problems: [] });
    expect(await inner.list(repositoryKeys.repackedDir)).toEqual([]);
    const packs = await packSizes(inner);
    for (const p of packsOfA) expect(packs.has(p)).toBe(false);
    expect(packs.size).toBe(2);
    await expectIntact(inner, live);
    expect(await repo.collectGarbage()).toMatchObject(nothingToDo);
  });
});
