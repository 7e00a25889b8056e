/**
 * Volumes for integration tests, against the real apiserver and moto's EC2: EBS volumes made
 * with CreateVolume, PVs over them (an `ebs.csi.aws.com` handle or an in-tree volume id) bound to
 * their PVCs, pods mounting them; what a backup or restore left in EC2 (snapshots by their
 * `velero.io/backup` tag, volumes by their `velero.io/restore` tag) and in the store (gzipped
 * JSON side files). `VolumeFixtures` remembers what it made and removes it again;
 * `useVolumeFixtures` gives a test file its own on the source cluster.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import {
  CreateVolumeCommand,
  DeleteVolumeCommand,
  DescribeSnapshotsCommand,
  DescribeVolumesCommand,
  EC2Client,
  type Snapshot,
  type Tag,
  type Volume,
} from '@aws-sdk/client-ec2';
import { CoreV1Api, type KubeConfig, type V1PersistentVolume } from '@kubernetes/client-node';
import { afterAll, beforeAll } from 'vitest';
import { localRepository } from '../../../cli/local/local-data-mover.js';
import { LocalDirectoryStore } from '../../../shared/adapters/local-directory-store.js';
import type { RepositoryLocation } from '../../../shared/contracts/data-mover-job.js';
import type { ObjectStore } from '../../../shared/ports/object-store.js';
import { awsConfig, kubeConfigFor, testEnv, uniqueName } from './env.js';
import { waitFor } from './wait.js';

export const ec2 = (): EC2Client => new EC2Client({ ...awsConfig(), maxAttempts: 3 });

/** A JSON object of the store, gunzipped when its key ends in `.gz`. */
export async function storedJson<T>(store: ObjectStore, key: string): Promise<T> {
  const body = await store.get(key);
  if (!body) throw new Error(`missing ${key}`);
  const text = key.endsWith('.gz') ? gunzipSync(body).toString('utf8') : Buffer.from(body).toString('utf8');
  return JSON.parse(text) as T;
}

/** EC2 tags as a map. */
export function tagMap(tags: readonly Tag[] | undefined): Record<string, string> {
  return Object.fromEntries((tags ?? []).map((t) => [t.Key ?? '', t.Value ?? '']));
}

/** The snapshots a backup made, found by its `velero.io/backup` tag. */
export async function snapshotsOfBackup(backupName: string): Promise<Snapshot[]> {
  const res = await ec2().send(
    new DescribeSnapshotsCommand({
      OwnerIds: ['self'],
      Filters: [{ Name: 'tag:velero.io/backup', Values: [backupName] }],
    }),
  );
  return res.Snapshots ?? [];
}

/** The volumes a restore created, found by its `velero.io/restore` tag. */
export async function volumesOfRestore(restoreName: string): Promise<Volume[]> {
  const res = await ec2().send(
    new DescribeVolumesCommand({ Filters: [{ Name: 'tag:velero.io/restore', Values: [restoreName] }] }),
  );
  return res.Volumes ?? [];
}

export class VolumeFixtures {
  readonly volumes: string[] = [];
  readonly pvs: string[] = [];
  readonly namespaces: string[] = [];
  private connected: { kc: KubeConfig; api: CoreV1Api } | undefined;

  connect(kc: KubeConfig): void {
    this.connected = { kc, api: kc.makeApiClient(CoreV1Api) };
  }

  /** The cluster's credentials (once connected, in beforeAll). */
  get kc(): KubeConfig {
    if (!this.connected) throw new Error('the volume fixtures are only connected inside tests');
    return this.connected.kc;
  }

  get api(): CoreV1Api {
    if (!this.connected) throw new Error('the volume fixtures are only connected inside tests');
    return this.connected.api;
  }

  async namespace(prefix: string): Promise<string> {
    const name = uniqueName(prefix);
    this.namespaces.push(name);
    await this.api.createNamespace({ body: { metadata: { name } } });
    return name;
  }

  /** An 8 GiB EBS volume (io1 with 500 IOPS unless told) in moto, with its tags. */
  async ebsVolume(options: {
    zone: string;
    tags?: Record<string, string>;
    volumeType?: 'io1' | 'gp3';
  }): Promise<string> {
    const volumeType = options.volumeType ?? 'io1';
    const res = await ec2().send(
      new CreateVolumeCommand({
        AvailabilityZone: options.zone,
        Size: 8,
        VolumeType: volumeType,
        ...(volumeType === 'io1' ? { Iops: 500 } : {}),
        TagSpecifications: [
          {
            ResourceType: 'volume',
            Tags: Object.entries(options.tags ?? { Name: 'scratch' }).map(([Key, Value]) => ({ Key, Value })),
          },
        ],
      }),
    );
    const id = res.VolumeId ?? '';
    this.volumes.push(id);
    return id;
  }

  /**
   * A PVC, bound to a new PV of the given source when there is one (its name is returned), and
   * a pod mounting it as volume `data` when asked. Unless told: labels `app: db`, no storage
   * class, reclaim policy Retain.
   */
  async claimWithVolume(options: {
    namespace: string;
    claim: string;
    source?: Record<string, unknown>;
    zone?: string;
    pvLabels?: Record<string, string>;
    pvcLabels?: Record<string, string>;
    storageClass?: string;
    reclaimPolicy?: 'Delete' | 'Retain';
    pod?: { name: string; annotations?: Record<string, string> };
  }): Promise<string | undefined> {
    const { namespace, claim, source } = options;
    const api = this.api;
    const storageClassName = options.storageClass ?? '';
    const pvName = source ? uniqueName(`pv-${claim}`) : undefined;
    if (pvName && source) {
      this.pvs.push(pvName);
      await api.createPersistentVolume({
        body: {
          metadata: {
            name: pvName,
            labels: {
              ...(options.pvLabels ?? { app: 'db' }),
              ...(options.zone ? { 'topology.kubernetes.io/zone': options.zone } : {}),
            },
          },
          spec: {
            capacity: { storage: '8Gi' },
            accessModes: ['ReadWriteOnce'],
            persistentVolumeReclaimPolicy: options.reclaimPolicy ?? 'Retain',
            storageClassName,
            claimRef: { namespace, name: claim },
            ...source,
          },
        },
      });
    }
    await api.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: claim, labels: options.pvcLabels ?? { app: 'db' } },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName,
          resources: { requests: { storage: '8Gi' } },
          ...(pvName ? { volumeName: pvName } : {}),
        },
      },
    });
    if (options.pod) {
      await api.createNamespacedPod({
        namespace,
        body: {
          metadata: {
            name: options.pod.name,
            ...(options.pod.annotations ? { annotations: options.pod.annotations } : {}),
          },
          spec: {
            containers: [{ name: 'db', image: 'postgres:16' }],
            volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }],
          },
        },
      });
    }
    return pvName;
  }

  /**
   * The PV and EBS volume a restored PVC binds to, once it is Bound (both removed with the
   * fixtures): the volume id is the PV's CSI handle.
   */
  async boundVolume(options: {
    namespace: string;
    claim: string;
  }): Promise<{ pvName: string; pv: V1PersistentVolume; volumeId: string }> {
    const { namespace, claim } = options;
    const pvc = await waitFor(`PVC ${namespace}/${claim} to bind`, async () => {
      const found = await this.api.readNamespacedPersistentVolumeClaim({ namespace, name: claim });
      return found.status?.phase === 'Bound' ? found : undefined;
    });
    const pvName = pvc.spec?.volumeName ?? '';
    this.pvs.push(pvName);
    const pv = await this.api.readPersistentVolume({ name: pvName });
    const volumeId = pv.spec?.csi?.volumeHandle ?? '';
    if (volumeId) this.volumes.push(volumeId);
    return { pvName, pv, volumeId };
  }

  /** Removes the namespaces, PVs and EBS volumes made, ignoring what is gone already. */
  async cleanUp(): Promise<void> {
    const api = this.api;
    const client = ec2();
    for (const ns of this.namespaces) await api.deleteNamespace({ name: ns }).catch(() => undefined);
    for (const pv of this.pvs) await api.deletePersistentVolume({ name: pv }).catch(() => undefined);
    for (const id of this.volumes)
      await client.send(new DeleteVolumeCommand({ VolumeId: id })).catch(() => undefined);
  }
}

/** Fixtures on the source cluster, connected before a file's tests and removed after them. */
export function useVolumeFixtures(): VolumeFixtures {
  const fixtures = new VolumeFixtures();
  beforeAll(() => fixtures.connect(kubeConfigFor(testEnv().clusters.source)));
  afterAll(() => fixtures.cleanUp());
  return fixtures;
}

/**
 * A directory store with a data mover repository in it (its key file beside, outside the
 * store) and the environment a data mover child process reaches moto with.
 */
export async function localDataMoverSetup(): Promise<{
  store: LocalDirectoryStore;
  repository: RepositoryLocation;
  environment: Record<string, string>;
}> {
  const env = testEnv();
  const store = new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'lifeboat-store-')));
  const keyFile = join(await mkdtemp(join(tmpdir(), 'lifeboat-key-')), 'repository.key');
  return {
    store,
    repository: localRepository(store, keyFile),
    environment: {
      AWS_REGION: env.aws.region,
      AWS_ENDPOINT_URL: env.aws.endpoint,
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
    },
  };
}
