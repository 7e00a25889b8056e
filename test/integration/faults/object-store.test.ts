/**
 * Fault scenarios: the object store (moto's S3, through a fault proxy) throttling, failing and
 * going away while a backup writes to it. Each backup must store exactly what a fault-free one
 * stores: the same keys, the same archive.
 */
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import type { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../../shared/adapters/s3-object-store.js';
import { backupKeys } from '../../../shared/domain/storage/keys.js';
import { FaultProxy, s3ErrorBody } from '../../env/fault-proxy.js';
import { backup, backupRequest } from '../backup/support.js';
import { type Archive, readArchive } from '../support/archive.js';
import { awsConfig, kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import { afterRequests, seedNamespace, sleep } from './support.js';

const SMALL = { pageSize: 10, maxMessageBytes: 6_000 };

describe('a backup while the object store misbehaves', () => {
  let kc: KubeConfig;
  let spec: Record<string, unknown>;
  let bucket: string;
  let clean: { archive: Archive; keys: string[] };
  const proxies: FaultProxy[] = [];

  /** The store as a deployment makes it (eight attempts per request), through `endpoint`. */
  const storeAt = (endpoint?: string) =>
    new S3ObjectStore({
      client: new S3Client({ ...awsConfig(), ...(endpoint ? { endpoint } : {}), maxAttempts: 8 }),
      bucket,
      prefix: 'faults',
    });

  /** The backup's keys with its name taken out, so two backups' can be compared. */
  async function keysOf(store: S3ObjectStore, name: string): Promise<string[]> {
    return (await store.list(backupKeys(name).dir)).map((k) => k.split(name).join('NAME'));
  }

  beforeAll(async () => {
    kc = kubeConfigFor(testEnv().clusters.source);
    const namespace = uniqueName('fault-s3');
    await seedNamespace(kc, { namespace, count: 40 });
    spec = { includedNamespaces: [namespace], includedResources: ['configmaps', 'secrets', 'namespaces'] };
    bucket = uniqueName('faults');
    await new S3Client(awsConfig()).send(new CreateBucketCommand({ Bucket: bucket }));
    const store = storeAt();
    const name = uniqueName('clean');
    expect(await backup({ kc, store, request: backupRequest(name, spec), extra: SMALL })).toMatchObject({
      ok: true,
      output: { phase: 'Completed' },
    });
    clean = { archive: await readArchive(store, backupKeys(name).contents), keys: await keysOf(store, name) };
  });

  afterEach(async () => {
    await Promise.all(proxies.splice(0).map((p) => p.close()));
  });

  /** Backs up through a proxy in front of moto; what is stored must equal the fault-free backup. */
  async function backupMatchesClean(setUp: (proxy: FaultProxy) => void): Promise<void> {
    const proxy = await FaultProxy.forHttp(testEnv().aws.endpoint);
    proxies.push(proxy);
    setUp(proxy);
    const store = storeAt(proxy.url);
    const name = uniqueName('faulty');
    const outcome = await backup({ kc, store, request: backupRequest(name, spec), extra: SMALL });
    expect(outcome).toMatchObject({ ok: true, output: { phase: 'Completed', errors: 0 } });
    const direct = storeAt();
    expect(await keysOf(direct, name)).toEqual(clean.keys);
    const archive = await readArchive(direct, backupKeys(name).contents);
    expect(archive.names).toEqual(clean.archive.names);
    expect(archive.contents).toEqual(clean.archive.contents);
  }

  it('S3 SlowDown storm on writes: every throttled PUT is retried, the backup is stored whole', async () => {
    let storm: { hits: number } = { hits: 0 };
    await backupMatchesClean((proxy) => {
      storm = proxy.inject({
        method: 'PUT',
        every: 2,
        times: 15,
        status: 503,
        answer: s3ErrorBody('SlowDown', 'Please reduce your request rate.'),
        headers: { 'content-type': 'application/xml' },
      });
    });
    expect(storm.hits).toBe(15);
  });

  it('S3 500 InternalError storm on reads and writes: retried, nothing lost or written twice', async () => {
    let storm: { hits: number } = { hits: 0 };
    await backupMatchesClean((proxy) => {
      storm = proxy.inject({
        every: 3,
        times: 15,
        status: 500,
        answer: s3ErrorBody('InternalError', 'We encountered an internal error. Please try again.'),
        headers: { 'content-type': 'application/xml' },
      });
    });
    expect(storm.hits).toBe(15);
  });

  it('moto stopped mid-write and started again: cut writes are retried, the backup is stored whole', async () => {
    let cut = () => 0;
    let fired = () => false;
    await backupMatchesClean((proxy) => {
      const trigger = afterRequests(proxy, {
        method: 'PUT',
        after: 10,
        fault: async () => {
          await proxy.kill();
          await sleep(1_500);
          await proxy.revive();
        },
      });
      cut = () => proxy.counts.cut;
      fired = () => trigger.fired;
    });
    expect(fired()).toBe(true);
    expect(cut()).toBeGreaterThan(0);
  });

  it('S3 errors that outlast the SDK’s retries become RetryableError, so the step is tried again', async () => {
    const proxy = await FaultProxy.forHttp(testEnv().aws.endpoint);
    proxies.push(proxy);
    const slowDown = s3ErrorBody('SlowDown', 'Please reduce your request rate.');
    proxy.inject({
      method: 'PUT',
      status: 503,
      answer: slowDown,
      headers: { 'content-type': 'application/xml' },
    });
    const store = new S3ObjectStore({
      client: new S3Client({ ...awsConfig(), endpoint: proxy.url, maxAttempts: 2 }),
      bucket,
      prefix: 'faults',
    });
    await expect(store.put('plugins/lifeboat/x.json', '{}')).rejects.toMatchObject({
      name: 'RetryableError',
      message: expect.stringContaining('PutObject plugins/lifeboat/x.json: SlowDown'),
    });
    await proxy.kill();
    await expect(store.get('plugins/lifeboat/x.json')).rejects.toMatchObject({
      name: 'RetryableError',
      message: expect.stringMatching(/GetObject plugins\/lifeboat\/x.json: .*ECONNREFUSED/),
    });
  });
});
