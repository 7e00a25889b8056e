/**
 * The interop sample: the demo application's kinds (sample-app.ts: Deployments, Services,
 * ConfigMaps, Secrets, a CRD with custom resources) plus what the differences between Velero and
 * Lifeboat were found on: a RoleBinding and a ClusterRoleBinding whose subject is a
 * ServiceAccount of the namespace, NodePort Services with an assigned and an explicit port, a
 * headless Service, a Job with a manual selector, a Job that has completed (KWOK completes its
 * pod), binary and unicode data, and an unbound PVC.
 */
import { BatchV1Api, CoreV1Api, type KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { installSampleApp, type SampleApp } from '../../fixtures/sample-app.js';
import { waitFor } from '../support/wait.js';
import { EXPLICIT_NODE_PORT_LABEL } from './compare.js';

export interface InteropSample {
  readonly app: SampleApp;
  readonly namespaces: readonly string[];
  readonly clusterRoleBinding: string;
  /** The node port `web-fixed` in the shop namespace was created with, explicitly. */
  readonly explicitNodePort: number;
}

async function addBindings(kc: KubeConfig, namespace: string, clusterRoleBinding: string): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'api' } } });
  await rbac.createNamespacedRole({
    namespace,
    body: {
      metadata: { name: 'reader' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
    },
  });
  const subjects = [{ kind: 'ServiceAccount', name: 'api', namespace }];
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name: 'api-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' },
      subjects,
    },
  });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: clusterRoleBinding, labels: { app: 'web' } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects,
    },
  });
}

/**
 * `web-fixed`, a NodePort Service whose port is set by its creator (so it is in the Service's
 * managed fields, and both tools keep it). The port is one the apiserver has just allocated and
 * released, so it is free in this cluster.
 */
async function addExplicitNodePort(kc: KubeConfig, namespace: string): Promise<number> {
  const core = kc.makeApiClient(CoreV1Api);
  const body = (nodePort?: number) => ({
    metadata: { name: 'web-fixed', labels: { [EXPLICIT_NODE_PORT_LABEL]: 'true' } },
    spec: {
      type: 'NodePort',
      selector: { app: 'web' },
      ports: [{ name: 'http', port: 80, ...(nodePort ? { nodePort } : {}) }],
    },
  });
  const probe = await core.createNamespacedService({ namespace, body: body() });
  const port = probe.spec?.ports?.[0]?.nodePort;
  if (!port) throw new Error('the apiserver assigned web-fixed no node port');
  await core.deleteNamespacedService({ namespace, name: 'web-fixed' });
  await core.createNamespacedService({ namespace, body: body(port) });
  return port;
}

async function addServices(kc: KubeConfig, namespace: string): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  await core.createNamespacedService({
    namespace,
    body: {
      metadata: { name: 'web-nodeport' },
      spec: { type: 'NodePort', selector: { app: 'web' }, ports: [{ name: 'http', port: 80 }] },
    },
  });
  await core.createNamespacedService({
    namespace,
    body: {
      metadata: { name: 'web-headless' },
      spec: { clusterIP: 'None', selector: { app: 'web' }, ports: [{ port: 8080 }] },
    },
  });
}

async function addData(kc: KubeConfig, namespace: string): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const binary = Buffer.from([0, 1, 2, 254, 255, 0x80, 0x7f]).toString('base64');
  await core.createNamespacedConfigMap({
    namespace,
    body: {
      metadata: { name: 'unicode', annotations: { note: 'größe ✓ 日本語 🚢' } },
      data: { greeting: 'héllo wörld — 你好 — 🚢' },
      binaryData: { blob: binary },
    },
  });
  await core.createNamespacedSecret({
    namespace,
    body: { metadata: { name: 'binary' }, type: 'Opaque', data: { key: binary } },
  });
  await core.createNamespacedPersistentVolumeClaim({
    namespace,
    body: {
      metadata: { name: 'unbound' },
      spec: {
        accessModes: ['ReadWriteOnce'],
        storageClassName: 'none-such',
        resources: { requests: { storage: '1Gi' } },
      },
    },
  });
}

async function addManualSelectorJob(kc: KubeConfig, namespace: string): Promise<void> {
  await kc.makeApiClient(BatchV1Api).createNamespacedJob({
    namespace,
    body: {
      metadata: { name: 'migrate' },
      spec: {
        manualSelector: true,
        selector: { matchLabels: { job: 'migrate' } },
        suspend: true,
        template: {
          metadata: { labels: { job: 'migrate' } },
          spec: { restartPolicy: 'Never', containers: [{ name: 'migrate', image: 'migrate:1.0' }] },
        },
      },
    },
  });
}

/** A Job whose pod KWOK completes: both tools must leave it (and its pod) out of a restore. */
async function addCompletedJob(kc: KubeConfig, namespace: string): Promise<void> {
  const batch = kc.makeApiClient(BatchV1Api);
  await batch.createNamespacedJob({
    namespace,
    body: {
      metadata: { name: 'done' },
      spec: {
        template: { spec: { restartPolicy: 'Never', containers: [{ name: 'done', image: 'done:1.0' }] } },
      },
    },
  });
  await waitFor(
    'the job to complete',
    async () => (await batch.readNamespacedJob({ namespace, name: 'done' })).status?.completionTime,
    { timeoutMs: 120_000 },
  );
}

export async function installInteropSample(kc: KubeConfig, suffix: string): Promise<InteropSample> {
  const app = await installSampleApp(kc, suffix);
  const shop = app.namespaces.shop;
  const clusterRoleBinding = `api-view-${suffix}`;
  await addBindings(kc, shop, clusterRoleBinding);
  await addServices(kc, shop);
  const explicitNodePort = await addExplicitNodePort(kc, shop);
  await addData(kc, shop);
  await addManualSelectorJob(kc, shop);
  await addCompletedJob(kc, shop);
  return { app, namespaces: [shop, app.namespaces.db], clusterRoleBinding, explicitNodePort };
}
