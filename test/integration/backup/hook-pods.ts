/** Pods for hook tests: created Running (KWOK) in a namespace of their own; a store's text. */
import { gunzipSync } from 'node:zlib';
import { CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import type { ObjectStore } from '../../../shared/ports/object-store.js';
import { waitFor } from '../support/wait.js';

export async function text(store: ObjectStore, key: string): Promise<string> {
  const body = await store.get(key);
  if (!body) throw new Error(`missing ${key}`);
  return key.endsWith('.gz') ? gunzipSync(body).toString('utf8') : Buffer.from(body).toString('utf8');
}

export async function runningPod(
  kc: KubeConfig,
  options: {
    namespace: string;
    name: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    claim?: string;
  },
): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const body: V1Pod = {
    metadata: {
      name: options.name,
      labels: options.labels ?? {},
      ...(options.annotations ? { annotations: options.annotations } : {}),
    },
    spec: {
      containers: [{ name: 'main', image: 'busybox:1.36', command: ['sleep', 'infinity'] }],
      ...(options.claim
        ? { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: options.claim } }] }
        : {}),
    },
  };
  await core.createNamespacedPod({ namespace: options.namespace, body });
  await waitFor(
    `pod ${options.name} to run`,
    async () =>
      (await core.readNamespacedPod({ namespace: options.namespace, name: options.name })).status?.phase ===
      'Running',
  );
}

export async function namespaceWithServiceAccount(kc: KubeConfig, namespace: string): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  await waitFor('the default service account', async () =>
    (await core.listNamespacedServiceAccount({ namespace })).items.some(
      (s) => s.metadata?.name === 'default',
    ),
  );
}

/** A PVC bound to a hostPath PV made for it (no provisioner needed). */
export async function claimOnHostPath(
  kc: KubeConfig,
  options: {
    namespace: string;
    claim: string;
    volume: string;
    path: string;
    labels?: Record<string, string>;
  },
): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  await core.createPersistentVolume({
    body: {
      metadata: { name: options.volume },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        hostPath: { path: options.path },
        storageClassName: '',
      },
    },
  });
  await core.createNamespacedPersistentVolumeClaim({
    namespace: options.namespace,
    body: {
      metadata: { name: options.claim, ...(options.labels ? { labels: options.labels } : {}) },
      spec: {
        accessModes: ['ReadWriteOnce'],
        storageClassName: '',
        volumeName: options.volume,
        resources: { requests: { storage: '1Gi' } },
      },
    },
  });
}
