/**
 * The local backup's ItemBlock workers in worker threads: real threads running the bundle of
 * item-block-thread.ts against directory stores, compared with the same use case run here.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultItemBlockThreads, ItemBlockThreads } from '../../../../cli/local/item-block-threads.js';
import { backupItemBlocks } from '../../../../functions/backup-item-block/backup-item-block.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import { LocalTaskCallbacks } from '../../../../shared/adapters/local-task-callbacks.js';
import { systemClock } from '../../../../shared/adapters/system-clock.js';
import type { ItemBlockMessage } from '../../../../shared/contracts/backup-run.js';
import { itemBlockMessageBody } from '../../../../shared/contracts/item-block-wire.js';
import { backupWorkKeys } from '../../../../shared/domain/storage/keys.js';

const backup = { name: 'threaded', runId: 'run-1', startedAt: '2026-11-24T01:00:00.000Z' };

function message(messageId: string, names: string[]): ItemBlockMessage {
  return {
    backup,
    messageId,
    blocks: names.map((name, i) => ({
      id: `${messageId}-b${i}`,
      items: [
        {
          ref: { group: '', version: 'v1', resource: 'configmaps', namespace: 'shop', name },
          kind: 'ConfigMap',
          preferred: true,
          json: JSON.stringify({
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name, namespace: 'shop' },
            data: { text: `ünïcode ${name}` },
          }),
        },
      ],
    })),
  };
}

const noPodExec = async (): Promise<never> => {
  throw new Error('no hooks in these messages');
};

async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'lifeboat-threads-'));
}

describe('the default count of ItemBlock worker threads', () => {
  it.each([
    [1, 0],
    [2, 0],
    [3, 2],
    [4, 3],
    [5, 4],
    [16, 4],
  ])(
    'is %i cores → %i threads: none on two cores, else the cores but one, at most four',
    (cores, threads) => {
      expect(defaultItemBlockThreads(cores)).toBe(threads);
    },
  );
});

describe('ItemBlock workers in worker threads', () => {
  const pools: ItemBlockThreads[] = [];
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((p) => p.close()));
  });

  function pool(options: {
    storeRoot: string;
    callbacks?: LocalTaskCallbacks;
    fallback?: (body: string) => Promise<number>;
    count?: number;
  }): ItemBlockThreads {
    const threads = new ItemBlockThreads({
      count: options.count ?? 1,
      callbacks: options.callbacks ?? new LocalTaskCallbacks(),
      fallback:
        options.fallback ??
        (async () => {
          throw new Error('the fallback was not expected to run');
        }),
      settings: { storeRoot: options.storeRoot, kubeconfig: '', execKubeconfig: '', csi: false },
    });
    pools.push(threads);
    return threads;
  }

  it('writes the same fragment and items as the worker in this thread', async () => {
    const [threadDir, hereDir] = [await tempDir(), await tempDir()];
    const body = message('m-0000001', ['a', 'b', 'c']);
    const threads = pool({ storeRoot: threadDir });
    const done = await threads.consume(itemBlockMessageBody(body));
    expect(done).toMatchObject({ items: 3, inThread: true });
    await expect(threads.unavailable).resolves.toBeUndefined();

    await backupItemBlocks(body, {
      store: new LocalDirectoryStore(hereDir),
      callbacks: new LocalTaskCallbacks(),
      clock: systemClock,
      podExecFor: noPodExec,
    });
    const work = backupWorkKeys(backup);
    const fragment = work.fragment(body.messageId);
    const [inThread, here] = await Promise.all([
      readFile(join(threadDir, fragment)),
      readFile(join(hereDir, fragment)),
    ]);
    expect(inThread.equals(here)).toBe(true);
    const result = async (dir: string) =>
      JSON.parse(gunzipSync(await readFile(join(dir, work.messageResult(body.messageId)))).toString('utf8'));
    const [threadResult, hereResult] = [await result(threadDir), await result(hereDir)];
    expect(threadResult.items).toEqual(hereResult.items);
    expect(threadResult.items).toHaveLength(3);
    expect(threadResult.fragmentKey).toBe(fragment);
  });

  it("spreads messages over the threads and wakes the state machine's wait from the main thread", async () => {
    const storeRoot = await tempDir();
    const callbacks = new LocalTaskCallbacks();
    const work = backupWorkKeys(backup);
    await new LocalDirectoryStore(storeRoot).put(
      work.collected,
      JSON.stringify({ attempt: 'm', messages: 6, blocks: 12, items: 12, taskToken: 'token-1' }),
    );
    const waited = callbacks.wait('token-1');
    const threads = pool({ storeRoot, callbacks, count: 2 });
    // Both threads started (a message each), then four at once: two for each.
    const first = await Promise.all(
      [1, 2].map((n) => threads.consume(itemBlockMessageBody(message(`m-000000${n}`, [`x${n}`, `y${n}`])))),
    );
    expect(new Set(first.map((r) => r.thread)).size).toBe(2);
    const results = await Promise.all(
      [3, 4, 5, 6].map((n) =>
        threads.consume(itemBlockMessageBody(message(`m-000000${n}`, [`x${n}`, `y${n}`]))),
      ),
    );
    expect(results.map(({ items, inThread }) => ({ items, inThread }))).toEqual(
      Array(4).fill({ items: 2, inThread: true }),
    );
    const perThread = new Map<number | undefined, number>();
    for (const r of results) perThread.set(r.thread, (perThread.get(r.thread) ?? 0) + 1);
    expect([...perThread.values()]).toEqual([2, 2]);
    await expect(waited).resolves.toMatchObject({ messages: 6, blocks: 12, items: 12 });
  });

  it("fails a message that fails in the thread with the error's name, and goes on", async () => {
    const threads = pool({ storeRoot: await tempDir() });
    await expect(threads.consume('{not json')).rejects.toMatchObject({ name: 'SyntaxError' });
    await expect(
      threads.consume(JSON.stringify({ ...message('m-0000009', ['z']), messageId: 7 })),
    ).rejects.toMatchObject({ name: 'ZodError' });
    await expect(threads.consume(itemBlockMessageBody(message('m-0000010', ['z'])))).resolves.toMatchObject({
      items: 1,
      inThread: true,
    });
    // Once closed (the backup is over), nothing more is taken.
    await threads.close();
    await expect(threads.consume(itemBlockMessageBody(message('m-0000011', ['z'])))).rejects.toThrow(
      /closed/,
    );
  });

  it('backs messages up in this thread when no worker thread can start', async () => {
    const handled: string[] = [];
    // A store root that is not a string: the thread fails as it starts.
    const threads = new ItemBlockThreads({
      count: 1,
      callbacks: new LocalTaskCallbacks(),
      fallback: async (body) => {
        handled.push(body);
        return 5;
      },
      settings: { storeRoot: 42 as unknown as string, kubeconfig: '', execKubeconfig: '', csi: false },
    });
    pools.push(threads);
    await expect(threads.consume('{"a":1}')).resolves.toEqual({ items: 5, inThread: false });
    expect(handled).toEqual(['{"a":1}']);
    // Said why, for the progress display: the thread failed as it started.
    await expect(threads.unavailable).resolves.toMatch(
      /^every worker thread ended before it started: .*must be of type string/,
    );
  });
});
