/**
 * What a repository run costs whatever its size: the requests of opening, leasing and writing a
 * manifest. Counted, never timed: a re-run of the data mover is mostly these round trips.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openRepository } from '../../../../../shared/adapters/repository/open-repository.js';
import { RepositoryCrypto } from '../../../../../shared/adapters/repository/repository-crypto.js';
import { RepositorySession } from '../../../../../shared/adapters/repository/repository-session.js';
import { repositoryKeys } from '../../../../../shared/domain/storage/keys.js';
import type { PutOptions } from '../../../../../shared/ports/object-store.js';
import { DelegatingStore, localKey as key, TestClock, tempStore } from './support.js';

/** Counts lease writes, and can hold listings of condemned packs until released. */
class LeaseCountingStore extends DelegatingStore {
  leasePuts = 0;
  private held: (() => void)[] = [];
  holdCondemnedLists = false;
  override put(k: string, body: Uint8Array | string, options?: PutOptions): Promise<void> {
    if (k.startsWith(repositoryKeys.leasesDir)) this.leasePuts++;
    return super.put(k, body, options);
  }
  condemnedLists = 0;
  override async list(prefix: string, options?: { signal?: AbortSignal }): Promise<string[]> {
    if (prefix !== repositoryKeys.condemnedDir) return super.list(prefix, options);
    this.condemnedLists++;
    const hold = this.holdCondemnedLists;
    // Listed now, answered when released: the listing is as old as its request.
    const keys = await super.list(prefix, options);
    if (hold) await new Promise<void>((resolve) => this.held.push(resolve));
    return keys;
  }
  releaseHeld(): void {
    for (const resolve of this.held.splice(0)) resolve();
  }
  heldCount(): number {
    return this.held.length;
  }
}

describe('a repository run’s fixed requests', () => {
  it('put the writer’s lease once when the flush and the manifest follow its start closely', async () => {
    const { store: inner } = await tempStore();
    const store = new LeaseCountingStore(inner);
    const clock = new TestClock();
    const repo = await openRepository({ store, keys: key(), clock });
    const writer = repo.writer();
    const id = (await writer.putBlob(randomBytes(1000))).id;
    await writer.flush();
    await repo.writeManifest({
      kind: 'file',
      id: 'm1',
      createdAt: clock.now().toISOString(),
      tags: {},
      root: id,
      stats: { totalBytes: 0, bytesRead: 0, rawBytesStored: 0, storedBytes: 0, blobsDeduplicated: 0 },
    });

    expect(store.leasePuts).toBe(1);

    // Later in a long run, the same steps renew it first.
    clock.advance(2 * 60_000);
    await writer.flush();
    expect(store.leasePuts).toBe(2);
    await writer.close();
  });

  it('keep the condemned packs of the latest refresh, whatever order the listings answer in', async () => {
    const { store: inner } = await tempStore();
    const store = new LeaseCountingStore(inner);
    const crypto = new RepositoryCrypto({ dataKey: randomBytes(32), repositoryId: '0'.repeat(32) });
    const session = new RepositorySession({ store, crypto, clock: new TestClock() });
    store.holdCondemnedLists = true;
    // A refresh started before a pack was condemned (say, the one behind an open) …
    const early = session.refresh();
    await until(() => store.heldCount() === 1);
    await inner.put(
      repositoryKeys.condemned('c'.repeat(32)),
      JSON.stringify({
        recordId: 'c'.repeat(32),
        createdAt: '2026-01-01T00:00:00Z',
        packs: [{ id: 'a'.repeat(32), bytes: 1 }],
      }),
    );
    // … and one started after it (a writer's, after its lease): it lists only once the first is done.
    const late = session.refresh();
    store.holdCondemnedLists = false;
    await new Promise((resolve) => setImmediate(resolve));
    expect(store.condemnedLists).toBe(1);
    store.releaseHeld();
    await Promise.all([early, late]);

    expect(store.condemnedLists).toBe(2);
    expect([...session.condemnedPacks()]).toEqual(['a'.repeat(32)]);
  });
});

/** Waits, a turn of the event loop at a time, until the condition holds. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}
