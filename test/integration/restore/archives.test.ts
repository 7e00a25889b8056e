/**
 * Restoring archives this project did not write: a Velero-format backup built here from the
 * documented layout (plain paths, a preferred-version copy, another API version folder), and
 * hostile archives, each refused before anything is created.
 */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ObjectStore } from '../../../shared/ports/object-store.js';
import { tempStore } from '../backup/support.js';
import { kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import { type Entry, putVeleroBackup, restoreLocally } from '../support/velero-backup.js';

async function restore(kc: KubeConfig, store: ObjectStore, backupName: string) {
  const { name: _name, ...outcome } = await restoreLocally({ kc, store, spec: { backupName } });
  return outcome;
}

describe('restoring archives written elsewhere', () => {
  let kc: KubeConfig;
  beforeAll(() => {
    kc = kubeConfigFor(testEnv().clusters.source);
  });

  it('restores a Velero 1.x backup with API-group-version folders', async () => {
    const store = await tempStore();
    const ns = uniqueName('velero');
    const cm = (name: string) =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: ns, uid: 'old-uid', resourceVersion: '7' },
        data: { from: 'velero' },
      });
    const deployment = JSON.stringify({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: ns },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'web', image: 'nginx' }] },
        },
      },
    });
    await putVeleroBackup(store, 'from-velero', [
      { name: 'metadata/version', body: '1.1.0\n' },
      {
        name: `resources/namespaces/cluster/${ns}.json`,
        body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
      },
      {
        name: `resources/namespaces/v1-preferredversion/cluster/${ns}.json`,
        body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
      },
      { name: `resources/configmaps/namespaces/${ns}/settings.json`, body: cm('settings') },
      {
        name: `resources/configmaps/v1-preferredversion/namespaces/${ns}/settings.json`,
        body: cm('settings'),
      },
      { name: `resources/deployments.apps/namespaces/${ns}/web.json`, body: deployment },
      { name: `resources/deployments.apps/v1-preferredversion/namespaces/${ns}/web.json`, body: deployment },
      {
        name: `resources/deployments.apps/v1beta2/namespaces/${ns}/web.json`,
        body: deployment.replace('apps/v1', 'apps/v1beta2'),
      },
    ]);
    const outcome = await restore(kc, store, 'from-velero');
    expect(outcome).toMatchObject({ ok: true, output: { phase: 'Completed', created: 3, failed: 0 } });
    const core = kc.makeApiClient(CoreV1Api);
    const restored = await core.readNamespacedConfigMap({ namespace: ns, name: 'settings' });
    expect(restored.data).toEqual({ from: 'velero' });
    expect(restored.metadata?.uid).not.toBe('old-uid');
  });

  const hostile: [string, (ns: string) => Entry[]][] = [
    [
      'path traversal',
      (ns) => [{ name: `resources/configmaps/namespaces/${ns}/../../../../etc/x.json`, body: '{}' }],
    ],
    [
      'a symlink',
      (ns) => [
        { name: `resources/configmaps/namespaces/${ns}/link.json`, type: 'symlink', linkname: '/etc/passwd' },
      ],
    ],
    [
      'malformed JSON',
      (ns) => [{ name: `resources/configmaps/namespaces/${ns}/bad.json`, body: '{"kind":' }],
    ],
  ];
  it.each(hostile)('refuses an archive with %s and creates nothing', async (_, entriesFor) => {
    const store = await tempStore();
    const ns = uniqueName('hostile');
    const good = JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'first', namespace: ns },
      data: {},
    });
    // A valid object comes first: it must not be created either.
    await putVeleroBackup(store, 'hostile', [
      { name: 'metadata/version', body: '1.1.0\n' },
      {
        name: `resources/namespaces/cluster/${ns}.json`,
        body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
      },
      { name: `resources/configmaps/namespaces/${ns}/first.json`, body: good },
      ...entriesFor(ns),
    ]);
    const outcome = await restore(kc, store, 'hostile');
    expect(outcome).toMatchObject({ ok: false, error: 'RestoreFailed' });
    if (outcome.ok) return;
    expect(outcome.cause).toContain('the backup archive is refused');
    const namespaces = (await kc.makeApiClient(CoreV1Api).listNamespace()).items.map((n) => n.metadata?.name);
    expect(namespaces).not.toContain(ns);
  });
});
