/**
 * Fault scenarios: the apiserver misbehaving while a backup lists it. Each backup goes through a
 * fault proxy; each must end with the very archive a fault-free run writes (nothing lost, nothing
 * twice), or, when the apiserver never comes back, Failed with the reason recorded.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LocalDirectoryStore } from '../../../shared/adapters/local-directory-store.js';
import { backupKeys } from '../../../shared/domain/storage/keys.js';
import type { ClusterInfo } from '../../env/cluster.js';
import { FaultProxy } from '../../env/fault-proxy.js';
import { backup, backupRequest, tempStore } from '../backup/support.js';
import { type Archive, readArchive } from '../support/archive.js';
import { kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import { afterRequests, clusterThrough, QUICK_RETRIES, seedNamespace, sleep } from './support.js';

/** Small pages and messages: many requests, so a fault lands in the middle of the listing. */
const SMALL = { pageSize: 5, maxMessageBytes: 6_000 };

describe('a backup while the apiserver misbehaves', () => {
  let source: ClusterInfo;
  let kc: KubeConfig;
  let spec: Record<string, unknown>;
  let clean: Archive;
  const proxies: FaultProxy[] = [];

  beforeAll(async () => {
    source = testEnv().clusters.source;
    kc = kubeConfigFor(source);
    const namespace = uniqueName('fault-backup');
    await seedNamespace(kc, { namespace, count: 60 });
    spec = { includedNamespaces: [namespace], includedResources: ['configmaps', 'secrets', 'namespaces'] };
    const store = await tempStore();
    const name = uniqueName('clean');
    const made = await backup({ kc, store, request: backupRequest(name, spec), extra: SMALL });
    expect(made).toMatchObject({ ok: true, output: { phase: 'Completed', errors: 0 } });
    clean = await readArchive(store, backupKeys(name).contents);
    expect(clean.names.length).toBeGreaterThan(60);
  });

  afterEach(async () => {
    await Promise.all(proxies.splice(0).map((p) => p.close()));
  });

  async function proxied(): Promise<FaultProxy> {
    const proxy = await FaultProxy.forCluster(source);
    proxies.push(proxy);
    return proxy;
  }

  /** Backs up through the proxy; the archive must be the fault-free one, entry for entry. */
  async function backupMatchesClean(proxy: FaultProxy, store?: LocalDirectoryStore): Promise<void> {
    const target = store ?? (await tempStore());
    const name = uniqueName('faulty');
    const outcome = await backup({
      kc: (await clusterThrough(source, proxy)).kubeConfig,
      store: target,
      request: backupRequest(name, spec),
      extra: SMALL,
    });
    expect(outcome).toMatchObject({ ok: true, output: { phase: 'Completed', errors: 0 } });
    const archive = await readArchive(target, backupKeys(name).contents);
    expect(archive.names).toEqual(clean.names);
    expect(archive.contents).toEqual(clean.contents);
  }

  it('apiserver paused mid-backup: requests wait, the backup completes with every item once', async () => {
    const proxy = await proxied();
    const trigger = afterRequests(proxy, {
      after: 8,
      fault: async () => {
        proxy.pause();
        await sleep(2_000);
        proxy.resume();
      },
    });
    await backupMatchesClean(proxy);
    expect(trigger.fired).toBe(true);
    expect(proxy.counts.held).toBeGreaterThan(0);
  });

  it('apiserver killed mid-backup and restarted: cut requests are retried, the archive is whole', async () => {
    const proxy = await proxied();
    const trigger = afterRequests(proxy, {
      after: 8,
      fault: async () => {
        await proxy.kill();
        await sleep(1_500);
        await proxy.revive();
      },
    });
    await backupMatchesClean(proxy);
    expect(trigger.fired).toBe(true);
    expect(proxy.counts.cut).toBeGreaterThan(0);
  });

  it('apiserver 429 storm: every throttled LIST is retried, nothing is missing', async () => {
    const proxy = await proxied();
    const storm = proxy.inject({
      method: 'GET',
      every: 2,
      times: 12,
      status: 429,
      headers: { 'retry-after': '0' },
    });
    await backupMatchesClean(proxy);
    expect(storm.hits).toBe(12);
  });

  it('apiserver 5xx storm: 500s and 503s are retried, nothing is missing or doubled', async () => {
    const proxy = await proxied();
    const errors = proxy.inject({
      method: 'GET',
      path: /configmaps|secrets/,
      every: 3,
      times: 6,
      status: 500,
    });
    const unavailable = proxy.inject({ method: 'GET', every: 4, times: 6, status: 503 });
    await backupMatchesClean(proxy);
    expect(errors.hits + unavailable.hits).toBe(12);
  });

  it('apiserver gone for good mid-backup: the backup ends Failed with the reason recorded, nothing half-written', async () => {
    const proxy = await proxied();
    afterRequests(proxy, { after: 6, fault: () => proxy.kill() });
    const store = await tempStore();
    const name = uniqueName('gone');
    const started = Date.now();
    const outcome = await backup({
      kc: (await clusterThrough(source, proxy)).kubeConfig,
      store,
      request: backupRequest(name, spec),
      extra: { ...SMALL, cluster: await clusterThrough(source, proxy, QUICK_RETRIES) },
    });
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(outcome).toMatchObject({ ok: false, error: 'BackupFailed' });
    const document = JSON.parse(
      Buffer.from((await store.get(backupKeys(name).metadata)) ?? []).toString(),
    ) as {
      status: { phase: string; failureReason: string };
    };
    expect(document.status.phase).toBe('Failed');
    expect(document.status.failureReason).toMatch(
      /RetryableError: .*(ECONNREFUSED|socket hang up|ECONNRESET)/,
    );
    expect(await store.exists(backupKeys(name).contents)).toBe(false);
  });
});
