import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { planRestore } from '../../../../functions/plan-restore/plan-restore.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import { tarOf } from '../../../../shared/adapters/tar-archive.js';
import { backupKeys, restoreWorkKeys } from '../../../../shared/domain/storage/keys.js';
import type { LogEvent } from '../../../../shared/domain/storage/log.js';
import type { Cluster, ClusterWriter } from '../../../../shared/ports/cluster.js';

/** Velero skips completed jobs and pods, and logs each (restore.go: "is complete - skipping"). */

const resource = (group: string, version: string, plural: string, kind: string, namespaced: boolean) => ({
  group,
  version,
  resource: plural,
  kind,
  shortNames: [],
  namespaced,
  verbs: ['create'],
});

/** An empty cluster that knows namespaces, pods and jobs; the plan only discovers and reads. */
const emptyCluster = {
  discover: async () => ({
    resources: [
      resource('', 'v1', 'namespaces', 'Namespace', false),
      resource('', 'v1', 'pods', 'Pod', true),
      resource('batch', 'v1', 'jobs', 'Job', true),
    ],
    unavailable: [],
  }),
  read: async () => undefined,
} as unknown as Cluster & ClusterWriter;

const entry = (path: string, object: Record<string, unknown>) => ({
  name: path,
  body: JSON.stringify(object),
});

async function backupWithCompletedJob(store: LocalDirectoryStore): Promise<void> {
  const entries = [
    { name: 'metadata/version', body: '1.1.0\n' },
    entry('resources/namespaces/cluster/shop.json', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'shop' },
    }),
    entry('resources/jobs.batch/namespaces/shop/migrate.json', {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'migrate', namespace: 'shop' },
      spec: { template: { spec: { containers: [{ name: 'm', image: 'm' }], restartPolicy: 'Never' } } },
      status: { completionTime: '2026-01-01T00:00:00Z', succeeded: 1 },
    }),
    entry('resources/pods/namespaces/shop/migrate-x1.json', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'migrate-x1', namespace: 'shop' },
      spec: { containers: [{ name: 'm', image: 'm' }] },
      status: { phase: 'Succeeded' },
    }),
    entry('resources/pods/namespaces/shop/web.json', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { containers: [{ name: 'w', image: 'w' }] },
      status: { phase: 'Running' },
    }),
  ];
  await store.put(backupKeys('b1').contents, gzipSync(await tarOf(entries, { mtime: new Date(0) })));
}

describe('completed jobs and pods a restore selects', () => {
  let dir: string;
  let store: LocalDirectoryStore;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lifeboat-not-restored-'));
    store = new LocalDirectoryStore(dir);
    await backupWithCompletedJob(store);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  async function plan(dryRun: boolean) {
    const run = {
      name: 'r1',
      backupName: 'b1',
      cluster: 'c',
      runId: 'x',
      startedAt: '2026-01-01T00:00:00Z',
      dryRun,
    };
    const request = { cluster: 'c', restore: { metadata: { name: 'r1' }, spec: { backupName: 'b1' } } };
    await store.put(restoreWorkKeys(run).request, JSON.stringify(request));
    return { run, plan: await planRestore({ run }, { store, cluster: emptyCluster }) };
  }

  it('are not planned, and the restore log says so in Velero’s words', async () => {
    const { run, plan: planned } = await plan(false);
    expect(planned.totalItems).toBe(2);
    const raw = await store.get(restoreWorkKeys(run).planLog);
    const log = JSON.parse(gunzipSync(raw ?? Buffer.alloc(0)).toString('utf8')) as LogEvent[];
    expect(log.map((e) => [e.level, e.msg])).toEqual([
      ['info', 'shop/migrate is complete - skipping'],
      ['info', 'shop/migrate-x1 is complete - skipping'],
    ]);
    expect(planned.warnings).toBeUndefined();
  });

  it('are shown as skipped by a dry run', async () => {
    const { plan: planned } = await plan(true);
    expect(planned.preview).toEqual(
      expect.arrayContaining([
        {
          phase: 'jobs.batch',
          item: 'shop/migrate',
          action: 'skip',
          reason: 'shop/migrate is complete - skipping',
        },
        {
          phase: 'pods',
          item: 'shop/migrate-x1',
          action: 'skip',
          reason: 'shop/migrate-x1 is complete - skipping',
        },
        { phase: 'pods', item: 'shop/web', action: 'create' },
      ]),
    );
  });
});
