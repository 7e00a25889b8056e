import { gunzipSync } from 'node:zlib';
import {
  ApiextensionsV1Api,
  CoreV1Api,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { runLocalRestore } from '../../../cli/local/restore-runtime.js';
import { comparable } from '../../../functions/restore-phase/compare.js';
import { KubernetesCluster } from '../../../shared/adapters/kubernetes-cluster.js';
import type { LocalDirectoryStore } from '../../../shared/adapters/local-directory-store.js';
import { ExecutionFailed } from '../../../shared/adapters/local-state-machine.js';
import { prepareForRestore } from '../../../shared/domain/restore/item.js';
import { parseEntryName } from '../../../shared/domain/storage/archive-entry.js';
import { backupKeys, restoreKeys } from '../../../shared/domain/storage/keys.js';
import { installSampleApp, type SampleApp } from '../../fixtures/sample-app.js';
import { backup, backupRequest, tempStore } from '../backup/support.js';
import { readArchive } from '../support/archive.js';
import { kubeConfigFor, testEnv, uniqueName, useDrCluster } from '../support/env.js';
import { subset } from '../support/subset.js';
import { waitFor } from '../support/wait.js';

/** Objects that controllers of the target cluster recreate or own; compared by existence only. */
const CONTROLLER_MANAGED = [
  'events',
  'endpoints',
  'endpointslices.discovery.k8s.io',
  'pods',
  'replicasets.apps',
];

async function restore(
  kc: KubeConfig,
  store: LocalDirectoryStore,
  spec: Record<string, unknown>,
  name = uniqueName('restore'),
) {
  try {
    return {
      ok: true as const,
      output: await runLocalRestore(
        { cluster: 'target', restore: { metadata: { name }, spec } },
        { cluster: new KubernetesCluster(kc), store },
      ),
    };
  } catch (error) {
    if (error instanceof ExecutionFailed) return { ok: false as const, ...error.failure };
    throw error;
  }
}

describe('restoring the sample application', () => {
  let kc: KubeConfig;
  let app: SampleApp;
  let store: LocalDirectoryStore;
  let backupName: string;
  let originals: { gr: string; object: Record<string, unknown> }[];
  beforeAll(async () => {
    kc = kubeConfigFor(testEnv().clusters.source);
    app = await installSampleApp(kc, uniqueName('r'));
    store = await tempStore();
    backupName = uniqueName('for-restore');
    const made = await backup({
      kc,
      store,
      request: backupRequest(backupName, { includedNamespaces: Object.values(app.namespaces) }),
    });
    expect(made).toMatchObject({ ok: true, output: { phase: 'Completed' } });
    const archive = await readArchive(store, backupKeys(backupName).contents);
    originals = archive.names.flatMap((name) => {
      const entry = parseEntryName(name);
      if (entry.kind !== 'item' || entry.version) return [];
      return [
        {
          gr: entry.groupResource,
          object: JSON.parse(archive.contents.get(name) ?? '{}') as Record<string, unknown>,
        },
      ];
    });
  });

  it('brings every object back, equal once server-set fields are removed, after its namespaces were deleted', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const ext = kc.makeApiClient(ApiextensionsV1Api);
    for (const ns of Object.values(app.namespaces)) await core.deleteNamespace({ name: ns });
    await ext.deleteCustomResourceDefinition({ name: app.crd.name });
    await waitFor(
      'the sample namespaces to be gone',
      async () => {
        const all = (await core.listNamespace()).items.map((n) => n.metadata?.name);
        return Object.values(app.namespaces).every((ns) => !all.includes(ns));
      },
      { timeoutMs: 120_000 },
    );
    await waitFor(
      'the CRD to be gone',
      async () =>
        !(await ext.listCustomResourceDefinition()).items.some((c) => c.metadata?.name === app.crd.name),
    );

    const outcome = await restore(kc, store, { backupName });
    expect(outcome).toMatchObject({ ok: true, output: { phase: 'Completed', failed: 0 } });

    const cluster = new KubernetesCluster(kc);
    const missing: string[] = [];
    const different: string[] = [];
    for (const { gr, object } of originals.filter((o) => o.gr !== 'events')) {
      const meta = object.metadata as { namespace?: string; name?: string };
      const live = await cluster.read({ resource: gr.split('.')[0] ?? gr, object });
      const label = `${gr}/${meta.namespace ?? ''}/${meta.name}`;
      if (!live) {
        if (!CONTROLLER_MANAGED.includes(gr)) missing.push(label);
        continue;
      }
      if (CONTROLLER_MANAGED.includes(gr)) continue;
      const want = comparable(prepareForRestore(object, { groupResource: gr, backupName, restoreName: 'x' }));
      if (!subset(want, comparable(live))) different.push(label);
    }
    expect(missing).toEqual([]);
    expect(different).toEqual([]);
    const widget = originals.find((o) => o.gr === `widgets.${app.crd.group}`);
    expect(widget).toBeDefined();
  });

  it('skips what already exists and is equal, and reports it', async () => {
    const outcome = await restore(kc, store, { backupName, includedNamespaces: [app.namespaces.tools] });
    expect(outcome).toMatchObject({ ok: true, output: { phase: 'Completed', created: 0, failed: 0 } });
  });

  it('leaves a changed object with a warning under policy none, and patches it under update', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const tools = app.namespaces.tools;
    await core.patchNamespacedConfigMap(
      { namespace: tools, name: 'kept', body: { data: { a: 'changed' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const kept = await restore(kc, store, {
      backupName,
      includedNamespaces: [tools],
      existingResourcePolicy: 'none',
    });
    expect(kept).toMatchObject({ ok: true, output: { updated: 0 } });
    if (!kept.ok) return;
    expect((kept.output as { warnings: number }).warnings).toBeGreaterThan(0);
    expect((await core.readNamespacedConfigMap({ namespace: tools, name: 'kept' })).data).toEqual({
      a: 'changed',
    });

    const updated = await restore(kc, store, {
      backupName,
      includedNamespaces: [tools],
      existingResourcePolicy: 'update',
    });
    expect(updated).toMatchObject({ ok: true, output: { phase: 'Completed', updated: 1 } });
    expect((await core.readNamespacedConfigMap({ namespace: tools, name: 'kept' })).data).toEqual({ a: '1' });
  });

  it('returns the plan of a dry run and writes nothing', async () => {
    const name = uniqueName('dry');
    const before = await store.list('');
    const outcome = await restore(
      kc,
      store,
      { backupName, includedNamespaces: [app.namespaces.tools], dryRun: true },
      name,
    );
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    const plan = outcome.output as { preview: { phase: string; item: string; action: string }[] };
    expect(plan.preview).toContainEqual({
      phase: 'configmaps',
      item: `${app.namespaces.tools}/kept`,
      action: 'skip',
      reason: 'already exists and is equal',
    });
    expect(plan.preview.findIndex((p) => p.phase === 'namespaces')).toBeLessThan(
      plan.preview.findIndex((p) => p.phase === 'configmaps'),
    );
    const after = (await store.list('')).filter((k) => !k.includes('/work/'));
    expect(after).toEqual(before.filter((k) => !k.includes('/work/')));
  });

  describe('into a second cluster', () => {
    const dr = useDrCluster();

    it('does what its dry run planned, item for item', async () => {
      const target = kubeConfigFor(dr());
      const mapped = `${app.namespaces.db}-plan`;
      const spec = {
        backupName,
        includedNamespaces: [app.namespaces.db],
        namespaceMapping: { [app.namespaces.db]: mapped },
      };
      const dry = await restore(target, store, { ...spec, dryRun: true });
      expect(dry).toMatchObject({ ok: true });
      if (!dry.ok) return;
      const planned = (dry.output as { preview: { item: string; action: string }[] }).preview;
      expect(planned.filter((p) => p.action === 'create').length).toBeGreaterThan(5);

      const name = uniqueName('as-planned');
      const real = await restore(target, store, spec, name);
      expect(real).toMatchObject({ ok: true, output: { phase: 'Completed' } });
      const list = JSON.parse(
        gunzipSync((await store.get(restoreKeys(name).resourceList)) ?? new Uint8Array()).toString(),
      ) as Record<string, string[]>;
      const verb: Record<string, string> = {
        created: 'create',
        updated: 'update',
        skipped: 'skip',
        failed: 'fail',
      };
      const done = Object.values(list)
        .flat()
        .map((e) => {
          const [, item = '', result = ''] = /^(.*)\((\w+)\)$/.exec(e) ?? [];
          return `${verb[result] ?? result} ${item}`;
        })
        .sort();
      expect(done).toEqual(planned.map((p) => `${p.action} ${p.item}`).sort());
    });

    it('restores with a namespace mapping', async () => {
      const target = kubeConfigFor(dr());
      const mapped = `${app.namespaces.shop}-dr`;
      const outcome = await restore(target, store, {
        backupName,
        includedNamespaces: [app.namespaces.shop],
        namespaceMapping: { [app.namespaces.shop]: mapped },
      });
      expect(outcome).toMatchObject({ ok: true, output: { phase: 'Completed', failed: 0 } });
      const core = target.makeApiClient(CoreV1Api);
      const cm = await core.readNamespacedConfigMap({ namespace: mapped, name: 'web-config' });
      expect(cm.data).toEqual({ mode: 'production' });
      expect(cm.metadata?.labels?.['velero.io/backup-name']).toBe(backupName);
    });
  });
});
