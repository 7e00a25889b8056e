/**
 * Fault scenarios: the apiserver misbehaving while a restore writes to it. One backup of a
 * namespace of plain objects is restored, through a fault proxy, into a namespace of its own per
 * scenario; each must leave every object there exactly once, report counts that match what the
 * cluster holds, and name every item it could not restore.
 */
import { gunzipSync } from 'node:zlib';
import type { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LocalDirectoryStore } from '../../../shared/adapters/local-directory-store.js';
import { restoreKeys } from '../../../shared/domain/storage/keys.js';
import type { ClusterInfo } from '../../env/cluster.js';
import { FaultProxy } from '../../env/fault-proxy.js';
import { backup, backupRequest, type Outcome, tempStore } from '../backup/support.js';
import { kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import {
  afterRequests,
  clusterThrough,
  objectsIn,
  QUICK_RETRIES,
  restore,
  seedNamespace,
  sleep,
} from './support.js';

interface RestoreRecord {
  status: {
    phase: string;
    failureReason?: string;
    errors?: number;
    progress: { totalItems: number; itemsRestored: number };
  };
}

describe('a restore while the apiserver misbehaves', () => {
  let source: ClusterInfo;
  let kc: KubeConfig;
  let store: LocalDirectoryStore;
  let namespace: string;
  let backupName: string;
  let originals: string[];
  const proxies: FaultProxy[] = [];

  beforeAll(async () => {
    source = testEnv().clusters.source;
    kc = kubeConfigFor(source);
    namespace = uniqueName('fault-restore');
    await seedNamespace(kc, { namespace, count: 60 });
    originals = await objectsIn(kc, namespace);
    store = await tempStore();
    backupName = uniqueName('to-restore');
    const spec = {
      includedNamespaces: [namespace],
      includedResources: ['configmaps', 'secrets', 'namespaces'],
    };
    expect(await backup({ kc, store, request: backupRequest(backupName, spec) })).toMatchObject({
      ok: true,
      output: { phase: 'Completed' },
    });
  });

  afterEach(async () => {
    await Promise.all(proxies.splice(0).map((p) => p.close()));
  });

  async function proxied(): Promise<FaultProxy> {
    const proxy = await FaultProxy.forCluster(source);
    proxies.push(proxy);
    return proxy;
  }

  /** Restores the backup into a namespace of its own, through the proxy, chunks of 10 items. */
  async function restoreThrough(
    proxy: FaultProxy,
    retries?: typeof QUICK_RETRIES,
  ): Promise<{ name: string; target: string; outcome: Outcome }> {
    const name = uniqueName('restore');
    const target = uniqueName('restored');
    const outcome = await restore({
      name,
      spec: { backupName, namespaceMapping: { [namespace]: target } },
      cluster: await clusterThrough(source, proxy, retries),
      store,
      extra: { chunkSize: 10 },
    });
    return { name, target, outcome };
  }

  async function recordOf(name: string): Promise<RestoreRecord> {
    const raw = await store.get(restoreKeys(name).status);
    if (!raw) throw new Error(`restore ${name} has no record`);
    return JSON.parse(Buffer.from(raw).toString()) as RestoreRecord;
  }

  async function resultErrors(name: string): Promise<string> {
    const raw = await store.get(restoreKeys(name).results);
    if (!raw) throw new Error(`restore ${name} has no results`);
    return JSON.stringify((JSON.parse(gunzipSync(raw).toString()) as { errors: unknown }).errors);
  }

  /** What the restore's resource list says it created or updated, as `<resource>/<name>`. */
  async function createdIn(name: string): Promise<string[]> {
    const raw = await store.get(restoreKeys(name).resourceList);
    if (!raw) throw new Error(`restore ${name} has no resource list`);
    const list = JSON.parse(gunzipSync(raw).toString()) as Record<string, string[]>;
    const plural: Record<string, string> = {
      'v1/ConfigMap': 'configmaps',
      'v1/Secret': 'secrets',
      'v1/Namespace': 'namespaces',
    };
    return Object.entries(list).flatMap(([kind, entries]) =>
      entries.flatMap((entry) => {
        const m = /^(?:[^/]+\/)?([^/(]+)\((created|updated)\)$/.exec(entry);
        return m ? [`${plural[kind] ?? kind}/${m[1]}`] : [];
      }),
    );
  }

  /** Every object is there once, and the record counts exactly what the cluster holds. */
  async function restoredWhole(name: string, target: string): Promise<void> {
    expect(await objectsIn(kc, target)).toEqual(originals);
    const record = await recordOf(name);
    expect(record.status.phase).toBe('Completed');
    // The objects and their namespace, each counted once; the namespace's kube-root-ca.crt,
    // which the cluster made first, is skipped.
    expect(record.status.progress).toEqual({
      totalItems: originals.length + 2,
      itemsRestored: originals.length + 1,
    });
  }

  it('apiserver paused mid-restore: writes wait, every object is restored once', async () => {
    const proxy = await proxied();
    const trigger = afterRequests(proxy, {
      method: 'POST',
      after: 15,
      fault: async () => {
        proxy.pause();
        await sleep(2_000);
        proxy.resume();
      },
    });
    const { name, target, outcome } = await restoreThrough(proxy);
    expect(outcome).toMatchObject({ ok: true, output: { phase: 'Completed' } });
    expect(trigger.fired).toBe(true);
    await restoredWhole(name, target);
  });

  it('apiserver killed mid-restore and restarted: cut writes are retried, none doubled or lost', async () => {
    const proxy = await proxied();
    const trigger = afterRequests(proxy, {
      method: 'POST',
      after: 15,
      fault: async () => {
        await proxy.kill();
        await sleep(1_500);
        await proxy.revive();
      },
    });
    const { name, target, outcome } = await restoreThrough(proxy);
    expect(outcome).toMatchObject({ ok: true, output: { phase: 'Completed', failed: 0 } });
    expect(trigger.fired).toBe(true);
    expect(proxy.counts.cut).toBeGreaterThan(0);
    await restoredWhole(name, target);
  });

  it('apiserver 429 storm on writes: each throttled create is retried, every object restored once', async () => {
    const proxy = await proxied();
    const storm = proxy.inject({
      method: 'POST',
      every: 2,
      times: 20,
      status: 429,
      headers: { 'retry-after': '0' },
    });
    const { name, target, outcome } = await restoreThrough(proxy);
    expect(outcome).toMatchObject({ ok: true, output: { phase: 'Completed' } });
    expect(storm.hits).toBe(20);
    await restoredWhole(name, target);
  });

  it('apiserver 5xx storm on writes: 500s and 503s are retried, every object restored once', async () => {
    const proxy = await proxied();
    const errors = proxy.inject({ method: 'POST', every: 3, times: 8, status: 500 });
    const unavailable = proxy.inject({ method: 'POST', every: 5, times: 5, status: 503 });
    const { name, target, outcome } = await restoreThrough(proxy);
    expect(outcome).toMatchObject({ ok: true, output: { phase: 'Completed' } });
    expect(errors.hits + unavailable.hits).toBe(13);
    await restoredWhole(name, target);
  });

  it('one item failing with 500 for good: PartiallyFailed naming it, every other object restored', async () => {
    const proxy = await proxied();
    const failing = proxy.inject({ method: 'POST', body: /"name":"cm-0007"/, status: 500 });
    const { name, target, outcome } = await restoreThrough(proxy, QUICK_RETRIES);
    expect(outcome).toMatchObject({ ok: true, output: { phase: 'PartiallyFailed', failed: 1 } });
    // Tried on every attempt of its chunk, and on the last attempt too.
    expect(failing.hits).toBeGreaterThan(QUICK_RETRIES.retryDelaysMs.length);
    expect(await objectsIn(kc, target)).toEqual(originals.filter((o) => o !== 'configmaps/cm-0007'));
    const record = await recordOf(name);
    expect(record.status).toMatchObject({
      phase: 'PartiallyFailed',
      errors: 1,
      progress: { totalItems: originals.length + 2, itemsRestored: originals.length },
    });
    expect(await resultErrors(name)).toMatch(/ConfigMap cm-0007: .*HTTP 500/);
  });

  it('apiserver gone for good mid-restore: the restore is recorded with counts matching the cluster and the items it could not restore named', async () => {
    const proxy = await proxied();
    afterRequests(proxy, { method: 'POST', after: 25, fault: () => proxy.kill() });
    const { name, target } = await restoreThrough(proxy, QUICK_RETRIES);
    const record = await recordOf(name);
    expect(['PartiallyFailed', 'Failed']).toContain(record.status.phase);
    const present = await objectsIn(kc, target);
    expect(present.length).toBeGreaterThan(0);
    expect(present.length).toBeLessThan(originals.length);
    // What it counts as restored is in the cluster; what is not in the cluster is named as an
    // error. (A create cut off in flight may have been applied unseen: it is named too.)
    const created = await createdIn(name);
    expect(record.status.progress.itemsRestored).toBe(created.length);
    for (const object of created.filter((o) => !o.startsWith('namespaces/')))
      expect(present).toContain(object);
    const errors = await resultErrors(name);
    for (const missing of originals.filter((o) => !present.includes(o)))
      expect(errors).toContain(
        missing.replace(/^configmaps\//, 'ConfigMap ').replace(/^secrets\//, 'Secret '),
      );
  });
});
