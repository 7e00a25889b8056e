import { gunzipSync } from 'node:zlib';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../../shared/adapters/s3-object-store.js';
import { backupKeys } from '../../../shared/domain/storage/keys.js';
import type { ObjectStore } from '../../../shared/ports/object-store.js';
import { installSampleApp, type SampleApp } from '../../fixtures/sample-app.js';
import { itemsIn, readArchive } from '../support/archive.js';
import { awsConfig, kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import { inventory } from '../support/inventory.js';
import { waitFor } from '../support/wait.js';
import { backup, backupRequest, tempStore } from './support.js';

const withoutEvents = (items: Iterable<string>): string[] =>
  [...items].filter((i) => !i.startsWith('events/')).sort();

async function json(store: ObjectStore, key: string): Promise<unknown> {
  const body = await store.get(key);
  if (!body) throw new Error(`missing ${key}`);
  const text = key.endsWith('.gz') ? gunzipSync(body).toString('utf8') : Buffer.from(body).toString('utf8');
  return JSON.parse(text);
}

describe('a backup of the sample application', () => {
  let kc: KubeConfig;
  let app: SampleApp;
  let namespaces: string[];
  beforeAll(async () => {
    kc = kubeConfigFor(testEnv().clusters.source);
    app = await installSampleApp(kc, uniqueName('b'));
    namespaces = Object.values(app.namespaces);
  });

  async function expectedItems(): Promise<string[]> {
    const listed = await inventory(kc, namespaces);
    listed.delete(`configmaps/${app.namespaces.tools}/scratch`);
    for (const ns of namespaces) listed.add(`namespaces//${ns}`);
    listed.add(`customresourcedefinitions.apiextensions.k8s.io//${app.crd.name}`);
    return withoutEvents(listed);
  }

  for (const storeKind of ['directory', 's3'] as const) {
    it(`writes exactly the selected objects in Velero's layout (${storeKind} store)`, async () => {
      let store: ObjectStore;
      if (storeKind === 's3') {
        const Bucket = uniqueName('backups');
        await new S3Client(awsConfig()).send(new CreateBucketCommand({ Bucket }));
        store = new S3ObjectStore({ client: new S3Client(awsConfig()), bucket: Bucket, prefix: 'cluster-a' });
      } else {
        store = await tempStore();
      }
      const name = uniqueName('full');
      const outcome = await backup({
        kc,
        store,
        request: backupRequest(name, { includedNamespaces: namespaces }),
      });
      expect(outcome).toMatchObject({ ok: true, output: { name, phase: 'Completed', errors: 0 } });

      const keys = backupKeys(name);
      const archive = await readArchive(store, keys.contents);
      expect(archive.names[0]).toBe('metadata/version');
      expect(archive.contents.get('metadata/version')).toBe('1.1.0\n');
      const backedUp = itemsIn(archive);
      expect(withoutEvents(backedUp)).toEqual(await expectedItems());
      const eventsNow = await inventory(kc, namespaces);
      for (const event of [...backedUp].filter((i) => i.startsWith('events/')))
        expect(eventsNow).toContain(event);

      // Every object also under its preferred version, with the same bytes.
      for (const entry of archive.names.filter((n) => /^resources\/[^/]+\/(namespaces|cluster)\//.test(n))) {
        const object = JSON.parse(archive.contents.get(entry) ?? '{}') as { apiVersion: string };
        const version = object.apiVersion.split('/').at(-1);
        const copy = entry.replace(/^(resources\/[^/]+\/)/, `$1${version}-preferredversion/`);
        expect(archive.contents.get(copy), copy).toBe(archive.contents.get(entry));
      }
      const widget = JSON.parse(
        archive.contents.get(
          `resources/widgets.${app.crd.group}/namespaces/${app.namespaces.shop}/large.json`,
        ) ?? '{}',
      ) as { spec: { size: number }; kind: string };
      expect(widget).toMatchObject({ kind: 'Widget', spec: { size: 9 } });

      const document = (await json(store, keys.metadata)) as {
        apiVersion: string;
        kind: string;
        metadata: { name: string; annotations?: Record<string, string> };
        status: Record<string, unknown> & {
          progress: { totalItems: number };
          startTimestamp: string;
          expiration: string;
        };
      };
      expect(document).toMatchObject({
        apiVersion: 'velero.io/v1',
        kind: 'Backup',
        metadata: {
          name,
          // Velero's backup controller records the source cluster's version (the env runs v1.34).
          annotations: {
            'velero.io/source-cluster-k8s-gitversion': expect.stringMatching(/^v1\.34\./),
            'velero.io/source-cluster-k8s-major-version': '1',
            'velero.io/source-cluster-k8s-minor-version': '34',
          },
        },
        status: { phase: 'Completed', formatVersion: '1.1.0', version: 1 },
      });
      expect(document.status.progress.totalItems).toBe(backedUp.size);
      const ttl = Date.parse(document.status.expiration) - Date.parse(document.status.startTimestamp);
      expect(ttl).toBe(720 * 3_600_000);

      const resourceList = (await json(store, keys.resourceList)) as Record<string, string[]>;
      expect(resourceList['v1/ConfigMap']).toContain(`${app.namespaces.shop}/web-config`);
      expect(resourceList['apps/v1/Deployment']).toEqual(
        [`${app.namespaces.db}/db`, `${app.namespaces.shop}/web`].sort(),
      );
      expect(await json(store, keys.itemOperations)).toEqual([]);
      expect(await json(store, keys.volumeInfo)).toEqual([]);
      // Velero writes its empty Go slices as null, and the CSI snapshot classes beside them.
      expect(await json(store, keys.volumeSnapshots)).toBeNull();
      expect(await json(store, keys.podVolumeBackups)).toBeNull();
      expect(await json(store, keys.csiVolumeSnapshotClasses)).toBeNull();
      expect(document.status.hookStatus).toEqual({});
      expect(document.metadata.annotations).toMatchObject({ 'velero.io/resource-timeout': '10m0s' });
      expect(await json(store, keys.results)).toEqual({ errors: {}, warnings: {} });
      const log = gunzipSync((await store.get(keys.logs)) ?? new Uint8Array()).toString('utf8');
      expect(log).toContain('msg="Backed up item"');
      expect(log).not.toContain('not-in-logs');
      expect(log).not.toContain(Buffer.from('not-in-logs').toString('base64'));
      // Nothing but Velero's folders at the top level.
      const top = new Set((await store.list('')).map((k) => k.split('/')[0]));
      expect([...top].sort()).toEqual(['backups', 'plugins']);
    });
  }

  it('writes the same backup with its workers in worker threads as in the main thread', async () => {
    const contents = new Map<number, Map<string, string>>();
    for (const threads of [1, 0]) {
      const store = await tempStore();
      const name = uniqueName(`threads-${threads}`);
      const ranInThread: boolean[] = [];
      const outcome = await backup({
        kc,
        store,
        request: backupRequest(name, { includedNamespaces: namespaces, excludedResources: ['events'] }),
        extra: {
          threads,
          onProgress: (event) => {
            if (event.type === 'message-done') ranInThread.push(event.inThread);
          },
        },
      });
      expect(outcome).toMatchObject({ ok: true, output: { name, phase: 'Completed', errors: 0 } });
      expect(ranInThread.length).toBeGreaterThan(0);
      expect(new Set(ranInThread)).toEqual(new Set([threads > 0]));
      const archive = await readArchive(store, backupKeys(name).contents);
      expect(withoutEvents(itemsIn(archive))).toEqual(await expectedItems());
      contents.set(threads, archive.contents);
    }
    // Object for object the same bytes (but for objects the cluster changed in between).
    const [threaded, here] = [contents.get(1), contents.get(0)];
    expect([...(threaded?.keys() ?? [])].sort()).toEqual([...(here?.keys() ?? [])].sort());
    const version = (text: string | undefined) =>
      (JSON.parse(text ?? '{}') as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
    for (const [entry, text] of threaded ?? [])
      if (entry.endsWith('.json') && version(text) === version(here?.get(entry)))
        expect(text, entry).toBe(here?.get(entry));
  });

  it('rejects a second backup of the same name and leaves the first untouched', async () => {
    const store = await tempStore();
    const name = uniqueName('once');
    const request = backupRequest(name, { includedNamespaces: [app.namespaces.tools] });
    expect(await backup({ kc, store, request })).toMatchObject({ ok: true });
    const before = await store.get(backupKeys(name).metadata);
    const second = await backup({ kc, store, request });
    expect(second).toEqual({
      ok: false,
      error: 'FailedValidation',
      cause: `backup.metadata.name: a backup named "${name}" already exists`,
    });
    expect(await store.get(backupKeys(name).metadata)).toEqual(before);
  });

  describe('selects items as Velero does', () => {
    const cases: {
      name: string;
      spec: (a: SampleApp) => Record<string, unknown>;
      has: (a: SampleApp) => string[];
      hasNot: (a: SampleApp) => string[];
    }[] = [
      {
        name: 'namespace globs',
        spec: (a) => ({ includedNamespaces: [`shop*${a.namespaces.shop.slice(5)}`] }),
        has: (a) => [
          `namespaces//${a.namespaces.shop}`,
          `namespaces//${a.namespaces.db}`,
          `configmaps/${a.namespaces.db}/db-config`,
        ],
        hasNot: (a) => [`namespaces//${a.namespaces.tools}`, `configmaps/${a.namespaces.tools}/kept`],
      },
      {
        name: 'excluded namespace globs',
        spec: (a) => ({
          includedNamespaces: [`*${a.namespaces.shop.slice(5)}`],
          excludedNamespaces: ['tools-*'],
        }),
        has: (a) => [`configmaps/${a.namespaces.shop}/web-config`],
        hasNot: (a) => [`configmaps/${a.namespaces.tools}/kept`, `namespaces//${a.namespaces.tools}`],
      },
      {
        name: 'included resources (old filter, short names)',
        spec: (a) => ({ includedNamespaces: [a.namespaces.shop], includedResources: ['cm', 'deploy'] }),
        has: (a) => [
          `configmaps/${a.namespaces.shop}/web-config`,
          `deployments.apps/${a.namespaces.shop}/web`,
          `namespaces//${a.namespaces.shop}`,
        ],
        hasNot: (a) => [`secrets/${a.namespaces.shop}/web-secret`, `services/${a.namespaces.shop}/web`],
      },
      {
        name: 'excluded resources (old filter)',
        spec: (a) => ({ includedNamespaces: [a.namespaces.shop], excludedResources: ['secrets', 'pods'] }),
        has: (a) => [`configmaps/${a.namespaces.shop}/web-config`, `services/${a.namespaces.shop}/web`],
        hasNot: (a) => [`secrets/${a.namespaces.shop}/web-secret`],
      },
      {
        name: 'scoped filters',
        spec: (a) => ({
          includedNamespaces: [a.namespaces.shop],
          includedNamespaceScopedResources: ['configmaps', `widgets.${a.crd.group}`],
          excludedClusterScopedResources: ['customresourcedefinitions'],
        }),
        has: (a) => [
          `configmaps/${a.namespaces.shop}/web-config`,
          `widgets.${a.crd.group}/${a.namespaces.shop}/small`,
        ],
        hasNot: (a) => [
          `services/${a.namespaces.shop}/web`,
          `customresourcedefinitions.apiextensions.k8s.io//${a.crd.name}`,
        ],
      },
      {
        name: 'a label selector',
        spec: (a) => ({
          includedNamespaces: Object.values(a.namespaces),
          labelSelector: { matchLabels: { app: 'web' } },
        }),
        has: (a) => [
          `deployments.apps/${a.namespaces.shop}/web`,
          `secrets/${a.namespaces.shop}/web-secret`,
          `widgets.${a.crd.group}/${a.namespaces.shop}/large`,
          `customresourcedefinitions.apiextensions.k8s.io//${a.crd.name}`,
          `namespaces//${a.namespaces.shop}`,
          `namespaces//${a.namespaces.db}`,
        ],
        // Velero's namespace tracker: namespaces named by the filter are kept with a selector too.
        hasNot: (a) => [
          `configmaps/${a.namespaces.db}/db-config`,
          `configmaps/${a.namespaces.shop}/kube-root-ca.crt`,
        ],
      },
      {
        name: 'a label selector over all namespaces keeps only namespaces with selected items',
        spec: () => ({ labelSelector: { matchLabels: { app: 'web' } } }),
        has: (a) => [`deployments.apps/${a.namespaces.shop}/web`, `namespaces//${a.namespaces.shop}`],
        hasNot: (a) => [
          `namespaces//${a.namespaces.db}`,
          `namespaces//${a.namespaces.tools}`,
          `configmaps/${a.namespaces.db}/db-config`,
        ],
      },
      {
        name: 'a namespace whose own labels match an OR selector is kept without selected items',
        spec: () => ({
          orLabelSelectors: [
            { matchLabels: { app: 'web' } },
            { matchLabels: { 'lifeboat.test/app': 'sample' } },
          ],
        }),
        has: (a) => [`namespaces//${a.namespaces.tools}`, `deployments.apps/${a.namespaces.shop}/web`],
        hasNot: (a) => [
          'namespaces//kube-system',
          `configmaps/${a.namespaces.tools}/kept`,
          `configmaps/${a.namespaces.db}/db-config`,
        ],
      },
      {
        name: 'OR-ed label selectors',
        spec: (a) => ({
          includedNamespaces: Object.values(a.namespaces),
          orLabelSelectors: [
            { matchLabels: { app: 'db' } },
            { matchExpressions: [{ key: 'step', operator: 'Exists' }] },
          ],
        }),
        has: (a) => [`deployments.apps/${a.namespaces.db}/db`, `configmaps/${a.namespaces.tools}/step-beta`],
        hasNot: (a) => [`deployments.apps/${a.namespaces.shop}/web`, `configmaps/${a.namespaces.tools}/kept`],
      },
      {
        name: 'the exclude-from-backup label',
        spec: (a) => ({ includedNamespaces: [a.namespaces.tools] }),
        has: (a) => [`configmaps/${a.namespaces.tools}/kept`],
        hasNot: (a) => [`configmaps/${a.namespaces.tools}/scratch`],
      },
    ];
    for (const c of cases) {
      it(c.name, async () => {
        const store = await tempStore();
        const name = uniqueName('filter');
        const outcome = await backup({ kc, store, request: backupRequest(name, c.spec(app)) });
        expect(outcome).toMatchObject({ ok: true, output: { phase: 'Completed' } });
        const items = itemsIn(await readArchive(store, backupKeys(name).contents));
        for (const item of c.has(app)) expect(items, `expected ${item}`).toContain(item);
        for (const item of c.hasNot(app)) expect(items, `did not expect ${item}`).not.toContain(item);
      });
    }

    it('pulls in the PVC of a selected pod and its PV, whatever their labels', async () => {
      const core = kc.makeApiClient(CoreV1Api);
      const ns = uniqueName('pvc');
      const pv = uniqueName('pv');
      await core.createNamespace({ body: { metadata: { name: ns } } });
      await core.createPersistentVolume({
        body: {
          metadata: { name: pv },
          spec: {
            capacity: { storage: '1Gi' },
            accessModes: ['ReadWriteOnce'],
            hostPath: { path: '/tmp/x' },
            storageClassName: '',
          },
        },
      });
      await core.createNamespacedPersistentVolumeClaim({
        namespace: ns,
        body: {
          metadata: { name: 'data' },
          spec: {
            accessModes: ['ReadWriteOnce'],
            storageClassName: '',
            volumeName: pv,
            resources: { requests: { storage: '1Gi' } },
          },
        },
      });
      await waitFor('the default service account', async () =>
        (await core.listNamespacedServiceAccount({ namespace: ns })).items.some(
          (s) => s.metadata?.name === 'default',
        ),
      );
      for (const [name, labels] of [
        ['picked', { pick: 'me' }],
        ['other', {}],
      ] as const) {
        await core.createNamespacedPod({
          namespace: ns,
          body: {
            metadata: { name, labels },
            spec: {
              containers: [
                {
                  name: 'c',
                  image: 'busybox',
                  volumeMounts: name === 'picked' ? [{ name: 'd', mountPath: '/d' }] : [],
                },
              ],
              volumes: name === 'picked' ? [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }] : [],
            },
          },
        });
      }
      const store = await tempStore();
      const name = uniqueName('pulled');
      const outcome = await backup({
        kc,
        store,
        request: backupRequest(name, {
          includedNamespaces: [ns],
          labelSelector: { matchLabels: { pick: 'me' } },
        }),
      });
      expect(outcome).toMatchObject({ ok: true, output: { phase: 'Completed' } });
      const items = itemsIn(await readArchive(store, backupKeys(name).contents));
      expect(items).toContain(`pods/${ns}/picked`);
      expect(items).toContain(`persistentvolumeclaims/${ns}/data`);
      expect(items).toContain(`persistentvolumes//${pv}`);
      expect(items).not.toContain(`pods/${ns}/other`);
    });

    it('backs up orderedResources in the given order', async () => {
      const store = await tempStore();
      const name = uniqueName('ordered');
      const tools = app.namespaces.tools;
      const request = backupRequest(name, {
        includedNamespaces: [tools],
        orderedResources: { configmaps: `${tools}/step-gamma,${tools}/step-alpha,${tools}/step-beta` },
      });
      expect(await backup({ kc, store, request })).toMatchObject({ ok: true });
      const archive = await readArchive(store, backupKeys(name).contents);
      const at = (n: string) => archive.names.indexOf(`resources/configmaps/namespaces/${tools}/${n}.json`);
      expect(at('step-gamma')).toBeGreaterThan(0);
      expect(at('step-gamma')).toBeLessThan(at('step-alpha'));
      expect(at('step-alpha')).toBeLessThan(at('step-beta'));
    });
  });
});
