import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eksToken } from '../../../../shared/adapters/eks-token.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import { LocalTaskCallbacks } from '../../../../shared/adapters/local-task-callbacks.js';
import { MemoryWorkQueue } from '../../../../shared/adapters/memory-work-queue.js';
import { AlreadyExists, LifeboatError } from '../../../../shared/domain/errors.js';

describe('the local directory store', () => {
  it('puts, gets, lists and refuses to overwrite with ifNoneMatch', async () => {
    const store = new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'store-')));
    await store.put('backups/a/velero-backup.json', '{}');
    await store.put('backups/b/b.tar.gz', new Uint8Array([1, 2, 3]));
    await store.putStream(
      'plugins/x',
      (async function* () {
        yield new Uint8Array([4]);
        yield new Uint8Array([5]);
      })(),
    );
    expect(await store.list('backups/')).toEqual(['backups/a/velero-backup.json', 'backups/b/b.tar.gz']);
    expect(Buffer.from((await store.get('plugins/x')) ?? [])).toEqual(Buffer.from([4, 5]));
    expect(await store.get('missing')).toBeUndefined();
    await expect(
      store.put('backups/a/velero-backup.json', 'again', { ifNoneMatch: true }),
    ).rejects.toBeInstanceOf(AlreadyExists);
    expect(Buffer.from((await store.get('backups/a/velero-backup.json')) ?? []).toString()).toBe('{}');
    expect(await store.exists('backups/b/b.tar.gz')).toBe(true);
  });

  it('writes into a directory removed since it last wrote there, leaving no temporary files', async () => {
    const root = await mkdtemp(join(tmpdir(), 'store-'));
    const store = new LocalDirectoryStore(root);
    await store.put('backups-work/b/r/fragments/m1.tar.gz', 'one');
    await rm(join(root, 'backups-work'), { recursive: true });
    await store.put('backups-work/b/r/fragments/m2.tar.gz', 'two');
    await store.put('backups-work/b/r/fragments/m3.tar.gz', 'three', { ifNoneMatch: true });
    expect(await readdir(join(root, 'backups-work/b/r/fragments'))).toEqual(['m2.tar.gz', 'm3.tar.gz']);
    expect(Buffer.from((await store.get('backups-work/b/r/fragments/m2.tar.gz')) ?? []).toString()).toBe(
      'two',
    );
  });

  it('lets several stores on one directory write the same keys at once', async () => {
    const root = await mkdtemp(join(tmpdir(), 'store-'));
    const stores = [new LocalDirectoryStore(root), new LocalDirectoryStore(root)];
    const keys = Array.from({ length: 20 }, (_, i) => `backups-work/b/r/results/m${i % 5}.json.gz`);
    await Promise.all(stores.flatMap((store) => keys.map((key) => store.put(key, key))));
    expect(await (stores[0] as LocalDirectoryStore).list('backups-work/')).toEqual(
      [0, 1, 2, 3, 4].map((i) => `backups-work/b/r/results/m${i}.json.gz`),
    );
    expect(await readdir(join(root, 'backups-work/b/r/results'))).toHaveLength(5);
  });

  it('writes every file readable by its owner only: backups and working data hold Secrets', async () => {
    const root = await mkdtemp(join(tmpdir(), 'store-'));
    const store = new LocalDirectoryStore(root);
    await store.put('backups/a/a.tar.gz', 'secret');
    await store.put('backups/a/velero-backup.json', '{}', { ifNoneMatch: true });
    await store.putStream(
      'plugins/lifeboat/work/x',
      (async function* () {
        yield new Uint8Array([1]);
      })(),
    );
    for (const key of ['backups/a/a.tar.gz', 'backups/a/velero-backup.json', 'plugins/lifeboat/work/x'])
      expect((await stat(join(root, key))).mode & 0o777, key).toBe(0o600);
  });

  it('leaves no temporary file behind when a write fails midway', async () => {
    const root = await mkdtemp(join(tmpdir(), 'store-'));
    const store = new LocalDirectoryStore(root);
    const failing = (async function* () {
      yield new Uint8Array(1024);
      throw new Error('the source broke');
    })();
    await expect(store.putStream('backups/a/a.tar.gz', failing)).rejects.toThrow('the source broke');
    await expect(store.put('backups/a/x', 'y', { ifNoneMatch: true })).resolves.toBeUndefined();
    await expect(store.put('backups/a/x', 'z', { ifNoneMatch: true })).rejects.toBeInstanceOf(AlreadyExists);
    expect(await readdir(join(root, 'backups/a'))).toEqual(['x']);
  });

  it('removes the temporary files of writers that are gone, never those of a running one', async () => {
    const root = await mkdtemp(join(tmpdir(), 'store-'));
    const store = new LocalDirectoryStore(root);
    await store.put('backups/a/keep', 'k');
    const dir = join(root, 'backups/a');
    await writeFile(join(dir, 'a.tar.gz.tmp-999999999-0a1b2c-1'), 'dead writer');
    await writeFile(join(dir, `b.tmp-${process.pid}-0a1b2c-2`), 'this process');
    await writeFile(join(dir, `c.tmp-${process.ppid}-0a1b2c-3`), 'a live process');
    expect(await store.removeTemporaries('backups/')).toBe(1);
    expect((await readdir(dir)).sort()).toEqual([
      `b.tmp-${process.pid}-0a1b2c-2`,
      `c.tmp-${process.ppid}-0a1b2c-3`,
      'keep',
    ]);
    expect(await store.removeTemporaries('plugins/')).toBe(0);
  });

  it('never resolves a key outside its root', async () => {
    const store = new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'store-')));
    await expect(store.put('../escape', 'x')).rejects.toBeInstanceOf(LifeboatError);
  });
});

describe('the in-memory work queue', () => {
  it('redelivers a failed message, then dead-letters it after maxReceiveCount', async () => {
    const deliveries: string[] = [];
    const dead: string[] = [];
    const queue = new MemoryWorkQueue({
      concurrency: 2,
      maxReceiveCount: 3,
      consume: async (body) => {
        deliveries.push(body);
        if (body === 'poison' || (body === 'flaky' && deliveries.filter((d) => d === 'flaky').length === 1)) {
          throw new Error('failed');
        }
      },
      deadLetter: async (body) => {
        dead.push(body);
      },
    });
    await queue.send(['ok', 'flaky', 'poison']);
    await queue.idle();
    expect(deliveries.filter((d) => d === 'ok')).toHaveLength(1);
    expect(deliveries.filter((d) => d === 'flaky')).toHaveLength(2);
    expect(deliveries.filter((d) => d === 'poison')).toHaveLength(3);
    expect(dead).toEqual(['poison']);
  });

  it('retries a dead-letter handler that fails, so no dead letter is lost to a passing outage', async () => {
    let outage = 3;
    const dead: string[] = [];
    const errors: unknown[] = [];
    const queue = new MemoryWorkQueue({
      concurrency: 1,
      maxReceiveCount: 2,
      redeliveryDelayMs: 1,
      consume: async () => {
        throw new Error('poison');
      },
      deadLetter: async (body) => {
        if (outage-- > 0) throw new Error('the store is away');
        dead.push(body);
      },
      onError: (error) => errors.push(error),
    });
    await queue.send(['poison']);
    await queue.idle();
    expect(dead).toEqual(['poison']);
    expect(errors).toEqual([]);
  });
});

describe('local task tokens', () => {
  it('delivers a success that arrives before the wait, and ignores a second one', async () => {
    const callbacks = new LocalTaskCallbacks();
    await callbacks.succeed('t', { n: 1 });
    await callbacks.succeed('t', { n: 2 });
    await expect(callbacks.wait('t')).resolves.toEqual({ n: 1 });
  });

  it('rejects the wait with the failure', async () => {
    const callbacks = new LocalTaskCallbacks();
    const waiting = callbacks.wait('t');
    await callbacks.fail('t', { name: 'Stuck', cause: 'no progress' });
    await expect(waiting).rejects.toMatchObject({ name: 'Stuck', message: 'no progress' });
  });
});

describe('the EKS token', () => {
  it('is a presigned STS GetCallerIdentity URL bound to the cluster name', async () => {
    const token = await eksToken({
      clusterName: 'prod-a',
      region: 'eu-west-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
    });
    expect(token.startsWith('k8s-aws-v1.')).toBe(true);
    expect(token).not.toMatch(/[=+/]/);
    const url = new URL(Buffer.from(token.slice('k8s-aws-v1.'.length), 'base64url').toString());
    expect(url.host).toBe('sts.eu-west-1.amazonaws.com');
    expect(url.searchParams.get('Action')).toBe('GetCallerIdentity');
    expect(url.searchParams.get('Version')).toBe('2011-06-15');
    expect(url.searchParams.get('X-Amz-Expires')).toBe('60');
    expect(url.searchParams.get('X-Amz-SignedHeaders')?.split(';')).toContain('x-k8s-aws-id');
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(
      /^AKIDEXAMPLE\/\d{8}\/eu-west-1\/sts\/aws4_request$/,
    );
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
  });
});
