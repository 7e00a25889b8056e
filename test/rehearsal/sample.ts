/**
 * The rehearsal's workload: the demo's sample application (Deployments, Services, ConfigMaps,
 * Secrets, a CRD with custom resources) plus, in its database namespace, a PVC bound to an EBS
 * volume (a moto volume behind the EBS CSI driver's PV) mounted by a Running pod whose backup
 * hook writes a file (KWOK runs it on this machine). What the cluster holds of it is captured as
 * comparable data, so a restore can be checked object by object against the source.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CreateVolumeCommand, EC2Client } from '@aws-sdk/client-ec2';
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import type { ClusterInfo } from '../env/cluster.js';
import type { AwsInfo } from '../env/moto.js';
import { installSampleApp, type SampleApp } from '../fixtures/sample-app.js';
import { uniqueName } from '../integration/support/env.js';
import { inventory } from '../integration/support/inventory.js';
import { waitFor } from '../integration/support/wait.js';

export interface Workload {
  readonly app: SampleApp;
  readonly namespaces: readonly string[];
  readonly volumeId: string;
  readonly pvName: string;
  /** Where the pod's hook writes, on this machine. */
  readonly hookMarker: string;
  /** Where a hook too long for a worker writes: the hook runner (a Fargate task) runs it. */
  readonly longHookMarker: string;
  /**
   * A second claim, on a host-path volume of a storage class no provisioner serves: not
   * snapshotted, so a restore re-provisions it; the test stands in for the provisioner.
   */
  readonly cache: { readonly pvName: string; readonly storageClass: string };
}

export const ZONE = 'us-east-1a';

/** Waits for the namespace's default ServiceAccount: the apiserver refuses pods before it. */
export async function defaultServiceAccount(core: CoreV1Api, namespace: string): Promise<void> {
  await waitFor('the default service account', async () =>
    (await core.listNamespacedServiceAccount({ namespace })).items.some(
      (a) => a.metadata?.name === 'default',
    ),
  );
}

/** A new namespace, named from the prefix, ready for pods. */
export async function namespaceForPods(core: CoreV1Api, prefix: string): Promise<string> {
  const namespace = uniqueName(prefix);
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  await defaultServiceAccount(core, namespace);
  return namespace;
}

export async function installWorkload(options: {
  kc: KubeConfig;
  cluster: ClusterInfo;
  aws: AwsInfo;
  suffix: string;
}): Promise<Workload> {
  const { kc, cluster, aws, suffix } = options;
  const app = await installSampleApp(kc, suffix);
  const core = kc.makeApiClient(CoreV1Api);
  const ec2 = new EC2Client({
    endpoint: aws.endpoint,
    region: aws.region,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  });
  const volume = await ec2.send(
    new CreateVolumeCommand({ AvailabilityZone: ZONE, Size: 8, VolumeType: 'gp3' }),
  );
  const volumeId = volume.VolumeId ?? '';
  const namespace = app.namespaces.db;
  const pvName = `pv-db-${suffix}`;
  await core.createPersistentVolume({
    body: {
      metadata: { name: pvName, labels: { 'topology.kubernetes.io/zone': ZONE } },
      spec: {
        capacity: { storage: '8Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: '',
        claimRef: { namespace, name: 'db-data' },
        csi: { driver: 'ebs.csi.aws.com', volumeHandle: volumeId, fsType: 'ext4' },
      },
    },
  });
  await core.createNamespacedPersistentVolumeClaim({
    namespace,
    body: {
      metadata: { name: 'db-data', labels: { app: 'db' } },
      spec: {
        accessModes: ['ReadWriteOnce'],
        storageClassName: '',
        volumeName: pvName,
        resources: { requests: { storage: '8Gi' } },
      },
    },
  });
  await defaultServiceAccount(core, namespace);
  await core.createNamespacedPod({
    namespace,
    body: {
      metadata: {
        name: 'db-0',
        labels: { app: 'db' },
        annotations: {
          'pre.hook.backup.velero.io/command': '["/bin/sh","-c","echo checkpointed > hook-marker"]',
        },
      },
      spec: {
        containers: [{ name: 'db', image: 'postgres:16' }],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'db-data' } }],
      },
    },
  });
  await core.createNamespacedPod({
    namespace,
    body: {
      metadata: {
        name: 'db-backup-agent',
        labels: { app: 'db-backup-agent' },
        annotations: {
          'pre.hook.backup.velero.io/command': '["/bin/sh","-c","echo flushed > long-hook-marker"]',
          'pre.hook.backup.velero.io/timeout': '30m',
        },
      },
      spec: { containers: [{ name: 'agent', image: 'agent:1' }] },
    },
  });
  await waitFor('the backup agent to run', async () =>
    (await core.readNamespacedPod({ namespace, name: 'db-backup-agent' })).status?.phase === 'Running'
      ? true
      : undefined,
  );
  await waitFor('the database pod to run', async () =>
    (await core.readNamespacedPod({ namespace, name: 'db-0' })).status?.phase === 'Running'
      ? true
      : undefined,
  );
  await waitFor('the claim to bind', async () =>
    (await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'db-data' })).status?.phase === 'Bound'
      ? true
      : undefined,
  );
  const cache = { pvName: `pv-cache-${suffix}`, storageClass: `standin-${suffix}` };
  await core.createPersistentVolume({
    body: {
      metadata: { name: cache.pvName, labels: { tier: 'cache' } },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Delete',
        storageClassName: cache.storageClass,
        claimRef: { namespace, name: 'cache' },
        hostPath: { path: `/tmp/${cache.pvName}` },
      },
    },
  });
  await core.createNamespacedPersistentVolumeClaim({
    namespace,
    body: {
      metadata: { name: 'cache' },
      spec: {
        accessModes: ['ReadWriteOnce'],
        storageClassName: cache.storageClass,
        volumeName: cache.pvName,
        resources: { requests: { storage: '1Gi' } },
      },
    },
  });
  return {
    cache,
    app,
    namespaces: [app.namespaces.shop, app.namespaces.db],
    volumeId,
    pvName,
    hookMarker: join(cluster.execDir, namespace, 'db-0', 'hook-marker'),
    longHookMarker: join(cluster.execDir, namespace, 'db-backup-agent', 'long-hook-marker'),
  };
}

export const hookRan = (workload: Workload): boolean => existsSync(workload.hookMarker);
export const longHookRan = (workload: Workload): boolean => existsSync(workload.longHookMarker);

/** Labels without the two a restore adds to everything it creates (Velero's). */
function ownLabels(labels: Record<string, string> | undefined): Record<string, string> {
  const { 'velero.io/backup-name': _b, 'velero.io/restore-name': _r, ...own } = labels ?? {};
  return own;
}

/** Each object's identity with the parts a restore must bring back: data, labels, specs. */
export async function capture(kc: KubeConfig, workload: Workload): Promise<Map<string, unknown>> {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const out = new Map<string, unknown>();
  for (const id of await inventory(kc, workload.namespaces)) {
    // Events are not restored (Velero's rule), and EndpointSlices are the cluster's own, remade
    // under new names by its controller for the restored Services.
    if (/^(events|events\.events\.k8s\.io|endpointslices\.discovery\.k8s\.io)\//.test(id)) continue;
    out.set(id, null);
  }
  for (const namespace of workload.namespaces) {
    for (const c of (await core.listNamespacedConfigMap({ namespace })).items)
      if (c.metadata?.name !== 'kube-root-ca.crt')
        out.set(`configmaps/${namespace}/${c.metadata?.name}`, {
          labels: ownLabels(c.metadata?.labels),
          data: c.data,
        });
    for (const s of (await core.listNamespacedSecret({ namespace })).items)
      out.set(`secrets/${namespace}/${s.metadata?.name}`, {
        labels: ownLabels(s.metadata?.labels),
        data: s.data,
      });
  }
  const { crd } = workload.app;
  const widgets = (await custom.listNamespacedCustomObject({
    group: crd.group,
    version: 'v1',
    namespace: workload.app.namespaces.shop,
    plural: crd.plural,
  })) as {
    items: { metadata: { name: string; labels?: Record<string, string> }; spec: unknown }[];
  };
  for (const w of widgets.items)
    out.set(`${crd.plural}.${crd.group}/${workload.app.namespaces.shop}/${w.metadata.name}`, {
      labels: ownLabels(w.metadata.labels),
      spec: w.spec,
    });
  return out;
}

/** The disaster: the application's namespaces, its CRD and its PV gone. */
export async function deleteWorkload(kc: KubeConfig, workload: Workload): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const ext = kc.makeApiClient(ApiextensionsV1Api);
  for (const name of Object.values(workload.app.namespaces)) await core.deleteNamespace({ name });
  await ext.deleteCustomResourceDefinition({ name: workload.app.crd.name });
  await core.deletePersistentVolume({ name: workload.pvName });
  await core.deletePersistentVolume({ name: workload.cache.pvName }).catch(() => undefined);
  for (const name of Object.values(workload.app.namespaces))
    await waitFor(`namespace ${name} to be gone`, async () => {
      const left = await core.readNamespace({ name }).then(
        () => true,
        () => false,
      );
      if (left) {
        // Without a namespace controller finalizing pods on a fake node, force the pods out.
        for (const pod of (await core.listNamespacedPod({ namespace: name })).items)
          await core
            .deleteNamespacedPod({ namespace: name, name: pod.metadata?.name ?? '', gracePeriodSeconds: 0 })
            .catch(() => undefined);
      }
      return left ? undefined : true;
    });
}

/** The provisioner of the cache claim's class: a fresh volume the re-provisioned claim binds to. */
export async function provisionCache(kc: KubeConfig, workload: Workload): Promise<string> {
  const core = kc.makeApiClient(CoreV1Api);
  const name = `${workload.cache.pvName}-new`;
  await core.createPersistentVolume({
    body: {
      metadata: { name },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: workload.cache.storageClass,
        hostPath: { path: `/tmp/${name}` },
      },
    },
  });
  return name;
}
