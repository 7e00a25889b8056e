/**
 * DR drills on the local runtime: the sample application backed up from the source cluster,
 * drilled into the second (DR) cluster under namespace mappings through statemachines/drill.asl.json
 * (its restore a nested run of restore.asl.json), against the real control planes and KWOK.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { runLocalDrill } from '../../../cli/local/drill-runtime.js';
import { main } from '../../../cli/main.js';
import type { Io } from '../../../cli/verbs.js';
import { readDrillReport } from '../../../functions/common/drill-records.js';
import { KubernetesCluster } from '../../../shared/adapters/kubernetes-cluster.js';
import type { LocalDirectoryStore } from '../../../shared/adapters/local-directory-store.js';
import { backupKeys, drillKeys } from '../../../shared/domain/storage/keys.js';
import { installSampleApp, type SampleApp } from '../../fixtures/sample-app.js';
import { backup, backupRequest, tempStore } from '../backup/support.js';
import { kubeConfigFor, testEnv, uniqueName, useDrCluster } from '../support/env.js';

const drCluster = useDrCluster();

/** The `lifeboat` command in this process, its output kept. */
async function lifeboat(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io = {
    out: { write: (s: string) => out.push(s) > 0 },
    err: { write: (s: string) => err.push(s) > 0 },
  } as unknown as Io;
  const code = await main(argv, io);
  return { code, out: out.join(''), err: err.join('') };
}

function drillRequest(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return { cluster: 'dr', drill: { metadata: { name }, spec } };
}

describe('a DR drill into the second cluster', () => {
  let source: KubeConfig;
  let dr: KubeConfig;
  let app: SampleApp;
  let store: LocalDirectoryStore;
  let backupName: string;
  beforeAll(async () => {
    source = kubeConfigFor(testEnv().clusters.source);
    dr = kubeConfigFor(drCluster());
    app = await installSampleApp(source, uniqueName('d'));
    store = await tempStore();
    backupName = uniqueName('for-drill');
    const made = await backup({
      kc: source,
      store,
      request: backupRequest(backupName, { includedNamespaces: Object.values(app.namespaces) }),
    });
    expect(made).toMatchObject({ ok: true, output: { phase: 'Completed' } });
  });

  const mappingTo = (suffix: string): Record<string, string> =>
    Object.fromEntries(Object.values(app.namespaces).map((ns) => [ns, `${ns}-${suffix}`]));

  it('restores under the mappings, checks every item, waits for the workloads and reports RPO and RTO with no mismatch', async () => {
    const name = uniqueName('drill');
    const mapping = mappingTo('a');
    const output = await runLocalDrill(
      drillRequest(name, { backupName, namespaceMapping: mapping, readyTimeout: '3m' }),
      { cluster: new KubernetesCluster(dr), store },
    );
    const report = await readDrillReport(store, name);
    expect(report?.mismatches).toEqual([]);
    expect(report?.failureReason).toBeUndefined();
    expect(output).toMatchObject({ name, phase: 'Completed', mismatches: 0 });
    expect(report).toMatchObject({
      phase: 'Completed',
      cluster: 'dr',
      backup: { name: backupName },
      restore: { name, phase: 'Completed' },
      namespaceMapping: mapping,
      items: { waitedOn: 2 },
    });
    // Namespaces, services, config maps, secrets, deployments, widgets, the CRD, service accounts.
    expect(report?.items.checked).toBeGreaterThanOrEqual(15);
    expect(report?.rpoSeconds).toBeGreaterThanOrEqual(0);
    expect(report?.rtoSeconds).toBeGreaterThanOrEqual(0);
    expect(Date.parse(report?.readyAt ?? '')).toBeGreaterThanOrEqual(Date.parse(report?.startedAt ?? ''));
    const core = dr.makeApiClient(CoreV1Api);
    const secret = await core.readNamespacedSecret({
      namespace: mapping[app.namespaces.shop] ?? '',
      name: 'web-secret',
    });
    expect(Buffer.from(secret.data?.password ?? '', 'base64').toString()).toBe('not-in-logs');
  });

  it("lists every item missing or different and fails the drill, never showing a Secret's data", async () => {
    // A backup whose resource list names an item its archive does not hold.
    const tamperedName = uniqueName('tampered');
    const keys = backupKeys(backupName);
    const copies = await store.list(keys.dir);
    for (const key of copies) {
      const body = await store.get(key);
      if (!body) continue;
      const target = key.replaceAll(backupName, tamperedName);
      if (key === keys.resourceList) {
        const list = JSON.parse(gunzipSync(body).toString()) as Record<string, string[]>;
        list['v1/ConfigMap'] = [...(list['v1/ConfigMap'] ?? []), `${app.namespaces.tools}/ghost`];
        await store.put(target, gzipSync(JSON.stringify(list)));
      } else if (key === keys.metadata) {
        await store.put(target, Buffer.from(body).toString().replaceAll(backupName, tamperedName));
      } else await store.put(target, body);
    }
    // The DR cluster already holds a stale Secret and ConfigMap where the restore would put them.
    const mapping = mappingTo('b');
    const shop = mapping[app.namespaces.shop] ?? '';
    const core = dr.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: shop } } });
    await core.createNamespacedSecret({
      namespace: shop,
      body: { metadata: { name: 'web-secret' }, stringData: { password: 'stale-value', extra: 'x' } },
    });
    await core.createNamespacedConfigMap({
      namespace: shop,
      body: { metadata: { name: 'web-config' }, data: { mode: 'staging' } },
    });

    const name = uniqueName('drill');
    const output = await runLocalDrill(
      drillRequest(name, { backupName: tamperedName, namespaceMapping: mapping, readyTimeout: '3m' }),
      { cluster: new KubernetesCluster(dr), store },
    );

    expect(output).toMatchObject({ name, phase: 'Failed', mismatches: 3 });
    const report = await readDrillReport(store, name);
    expect(report?.phase).toBe('Failed');
    expect(report?.failureReason).toContain('3 mismatches');
    expect(report?.mismatches).toEqual(
      expect.arrayContaining([
        {
          item: `v1/ConfigMap ${mapping[app.namespaces.tools]}/ghost`,
          problem: 'missing',
          detail: 'not in the target cluster',
        },
        {
          item: `v1/Secret ${shop}/web-secret`,
          problem: 'different',
          detail: 'differs in data.extra, data.password',
        },
        { item: `v1/ConfigMap ${shop}/web-config`, problem: 'different', detail: 'differs in data.mode' },
      ]),
    );
    const stored = Buffer.from((await store.get(drillKeys({ name }).report)) ?? []).toString();
    for (const secret of ['stale-value', 'not-in-logs'])
      for (const form of [secret, Buffer.from(secret).toString('base64')]) expect(stored).not.toContain(form);
  });

  it('clears the namespaces an earlier drill made before a repeat drill, and never one no drill made', async () => {
    // Prepare: a namespace of the mapping made by someone else, with an object of theirs
    const mapping = mappingTo('e');
    const shop = mapping[app.namespaces.shop] ?? '';
    const tools = mapping[app.namespaces.tools] ?? '';
    const core = dr.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: tools } } });
    await core.createNamespacedConfigMap({
      namespace: tools,
      body: { metadata: { name: 'theirs' }, data: { keep: 'me' } },
    });
    const drill = (name: string) =>
      runLocalDrill(drillRequest(name, { backupName, namespaceMapping: mapping, readyTimeout: '3m' }), {
        cluster: new KubernetesCluster(dr),
        store,
      });
    // …a first drill, then last week's leftovers in its namespace: a changed item, an extra one
    const first = uniqueName('drill');
    await drill(first);
    expect((await readDrillReport(store, first))?.phase).toBe('Completed');
    const config = await core.readNamespacedConfigMap({ namespace: shop, name: 'web-config' });
    await core.replaceNamespacedConfigMap({
      namespace: shop,
      name: 'web-config',
      body: { ...config, data: { mode: 'last-week' } },
    });
    await core.createNamespacedConfigMap({
      namespace: shop,
      body: { metadata: { name: 'last-week-only' }, data: { old: 'yes' } },
    });

    // Act: the repeat drill, under the same mappings
    const second = uniqueName('drill');
    const output = await drill(second);

    // Assess: restored afresh, no leftover; the namespace no drill made kept with its object
    const report = await readDrillReport(store, second);
    expect(report?.mismatches).toEqual([]);
    expect(output).toMatchObject({ name: second, phase: 'Completed', mismatches: 0 });
    const restored = await core.readNamespace({ name: shop });
    expect(restored.metadata?.labels?.['velero.io/restore-name']).toBe(second);
    await expect(
      core.readNamespacedConfigMap({ namespace: shop, name: 'last-week-only' }),
    ).rejects.toMatchObject({
      code: 404,
    });
    const theirs = await core.readNamespacedConfigMap({ namespace: tools, name: 'theirs' });
    expect(theirs.data).toEqual({ keep: 'me' });
  });

  it('runs from the command line, prints the summary, lists the report and publishes one event', async () => {
    const dir = store.location.slice('file://'.length);
    const mapping = Object.entries(mappingTo('c'))
      .map(([from, to]) => `${from}:${to}`)
      .join(',');
    const where = ['--local', '--dir', dir];
    const drilled = await lifeboat(
      ...['dr', 'drill', 'cli-drill', '--from-backup', backupName, '--namespace-mappings', mapping],
      ...['--timeout', '3m', '--kubeconfig', drCluster().kubeconfig, ...where],
    );
    expect(drilled.err).toContain('Drill "cli-drill" started');
    expect(drilled.out).toMatch(/Drill "cli-drill": Completed\n/);
    expect(drilled.out).toMatch(/RPO: +\d+s/);
    expect(drilled.out).toMatch(/RTO: +\d+s \(drill start to everything ready\)/);
    expect(drilled.out).toContain('Mismatches: 0');
    expect(drilled.code).toBe(0);

    const listed = await lifeboat('dr', 'get', ...where);
    expect(listed.out).toMatch(/^NAME +STATUS +BACKUP/);
    expect(listed.out).toMatch(new RegExp(`cli-drill +Completed +${backupName} +local `));
    const described = await lifeboat('dr', 'describe', 'cli-drill', ...where, '-o', 'json');
    expect(JSON.parse(described.out)).toMatchObject({
      name: 'cli-drill',
      phase: 'Completed',
      mismatches: [],
    });

    const events = await lifeboat('events', ...where, '-o', 'json');
    const drills = (
      JSON.parse(events.out) as { 'detail-type': string; detail: Record<string, unknown> }[]
    ).filter((e) => e.detail.drill === 'cli-drill');
    expect(drills).toHaveLength(1);
    expect(drills[0]).toMatchObject({
      'detail-type': 'Drill Completed',
      detail: { drill: 'cli-drill', phase: 'Completed', mismatches: 0, backup: { name: backupName } },
    });
    expect(drills[0]?.detail.rtoSeconds).toEqual(expect.any(Number));
  });

  it('refuses a bad timeout by its flag and a backup that is not there by its field, running nothing', async () => {
    const where = ['--local', '--dir', store.location.slice('file://'.length)];
    const badTimeout = await lifeboat(
      'dr',
      'drill',
      '--from-backup',
      backupName,
      '--timeout',
      'soon',
      ...where,
    );
    expect(badTimeout).toMatchObject({ code: 2, out: '' });
    expect(badTimeout.err).toContain('--timeout: must be a duration');
    const name = uniqueName('drill');
    await expect(
      runLocalDrill(drillRequest(name, { backupName: 'no-such-backup' }), {
        cluster: new KubernetesCluster(dr),
        store,
      }),
    ).rejects.toMatchObject({
      failure: {
        error: 'FailedValidation',
        cause: 'drill.spec.backupName: backup "no-such-backup" does not exist',
      },
    });
    expect(await readDrillReport(store, name)).toBeUndefined();
  });
});
