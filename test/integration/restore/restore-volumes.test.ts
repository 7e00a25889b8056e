/**
 * Restoring volumes by the backup's volumes-info, against the local apiserver (with its PV
 * controller) and moto's EC2: backups built here in Velero's layout, each with the volumes-info
 * Lifeboat's backup writes (its own builders) or Velero writes (CSI), restored by the local
 * runtime with a snapshotter on moto.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { CreateVolumeCommand, EC2Client } from '@aws-sdk/client-ec2';
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { pack } from 'tar-stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { type LocalRestoreOptions, runLocalRestore } from '../../../cli/local/restore-runtime.js';
import { EbsSnapshotter } from '../../../shared/adapters/ebs-snapshotter.js';
import { KubernetesCluster } from '../../../shared/adapters/kubernetes-cluster.js';
import { backupKeys, restoreKeys } from '../../../shared/domain/storage/keys.js';
import { snapshotTags } from '../../../shared/domain/volumes/ebs-volume.js';
import {
  type BackupVolumeInfo,
  backupVolumeInfoOf,
  nativeVolumeSnapshotOf,
} from '../../../shared/domain/volumes/info.js';
import type { ObjectStore } from '../../../shared/ports/object-store.js';
import { installVolumeSnapshotCrds } from '../../fixtures/volume-snapshot-crds.js';
import { tempStore } from '../backup/support.js';
import { awsConfig, kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import { volumesOfRestore } from '../support/volumes.js';
import { waitFor } from '../support/wait.js';

type Obj = Record<string, unknown>;

const ec2 = (): EC2Client => new EC2Client({ ...awsConfig(), maxAttempts: 3 });
const region = (): string => awsConfig().region;

async function tarball(entries: { name: string; body: Obj }[]): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  p.on('data', (c: unknown) => chunks.push(Buffer.from(c as Uint8Array)));
  const done = new Promise<void>((resolve) => p.on('end', () => resolve()));
  p.entry({ name: 'metadata/version', mode: 0o755 }, '1.1.0\n');
  for (const e of entries) p.entry({ name: e.name, mode: 0o755 }, JSON.stringify(e.body));
  p.finalize();
  await done;
  return gzipSync(Buffer.concat(chunks));
}

/** A backup in Velero's layout: namespace, PVs and PVCs, and (unless undefined) its volumes-info. */
async function putBackup(options: {
  store: ObjectStore;
  name: string;
  namespace: string;
  pvs: Obj[];
  pvcs: Obj[];
  volumeInfo: BackupVolumeInfo[] | Obj[] | undefined;
}): Promise<void> {
  const { store, name, namespace } = options;
  const keys = backupKeys(name);
  const name_ = (o: Obj): string => String((o.metadata as Obj).name);
  await store.put(
    keys.contents,
    await tarball([
      {
        name: `resources/namespaces/cluster/${namespace}.json`,
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
      },
      ...options.pvs.map((pv) => ({
        name: `resources/persistentvolumes/cluster/${name_(pv)}.json`,
        body: pv,
      })),
      ...options.pvcs.map((pvc) => ({
        name: `resources/persistentvolumeclaims/namespaces/${namespace}/${name_(pvc)}.json`,
        body: pvc,
      })),
    ]),
  );
  if (options.volumeInfo) await store.put(keys.volumeInfo, gzipSync(JSON.stringify(options.volumeInfo)));
  await store.put(
    keys.metadata,
    JSON.stringify({
      apiVersion: 'velero.io/v1',
      kind: 'Backup',
      metadata: { name, namespace: 'velero' },
      spec: { includedNamespaces: [namespace], ttl: '720h0m0s', storageLocation: 'default' },
      status: {
        phase: 'Completed',
        formatVersion: '1.1.0',
        version: 1,
        startTimestamp: '2026-01-01T00:00:00Z',
      },
    }),
  );
}

function persistentVolume(options: {
  name: string;
  namespace: string;
  claim: string;
  volumeId: string;
  zone: string;
  reclaimPolicy: 'Delete' | 'Retain';
  storageClass?: string;
  labels?: Record<string, string>;
}): Obj {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name: options.name,
      uid: 'old-pv-uid',
      resourceVersion: '41',
      labels: { 'topology.kubernetes.io/zone': options.zone, ...options.labels },
      annotations: {
        'pv.kubernetes.io/provisioned-by': 'ebs.csi.aws.com',
        'pv.kubernetes.io/bound-by-controller': 'yes',
      },
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      capacity: { storage: '8Gi' },
      persistentVolumeReclaimPolicy: options.reclaimPolicy,
      storageClassName: options.storageClass ?? 'gp3-test',
      volumeMode: 'Filesystem',
      csi: { driver: 'ebs.csi.aws.com', volumeHandle: options.volumeId, fsType: 'ext4' },
      claimRef: {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        namespace: options.namespace,
        name: options.claim,
        uid: 'old-pvc-uid',
        resourceVersion: '40',
      },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            {
              matchExpressions: [
                { key: 'topology.ebs.csi.aws.com/zone', operator: 'In', values: [options.zone] },
              ],
            },
          ],
        },
      },
    },
    status: { phase: 'Bound' },
  };
}

function claim(options: {
  name: string;
  namespace: string;
  volumeName: string;
  storageClass?: string;
  storage?: string;
}): Obj {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: options.name,
      namespace: options.namespace,
      uid: 'old-pvc-uid',
      annotations: {
        'pv.kubernetes.io/bind-completed': 'yes',
        'pv.kubernetes.io/bound-by-controller': 'yes',
        'volume.kubernetes.io/storage-provisioner': 'ebs.csi.aws.com',
        'velero.io/volume-snapshot-name': `velero-${options.name}-x1y2z`,
      },
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: options.storage ?? '8Gi' } },
      storageClassName: options.storageClass ?? 'gp3-test',
      volumeMode: 'Filesystem',
      volumeName: options.volumeName,
    },
    status: { phase: 'Bound' },
  };
}

/** An EBS volume in moto and its completed snapshot, tagged as a backup would tag it. */
async function snapshotInMoto(options: { zone: string; pvName: string; backupName: string }) {
  const snapshotter = new EbsSnapshotter({ client: ec2() });
  const created = await ec2().send(
    new CreateVolumeCommand({
      AvailabilityZone: options.zone,
      Size: 8,
      VolumeType: 'io1',
      Iops: 400,
    }),
  );
  const volumeId = created.VolumeId ?? '';
  const { tags } = snapshotTags({ backupName: options.backupName, pvName: options.pvName });
  const { snapshotId } = await snapshotter.createSnapshot({ volumeId, tags });
  await waitFor('the snapshot to complete', async () =>
    (await snapshotter.snapshotProgress(snapshotId)).state === 'completed' ? true : undefined,
  );
  return { volumeId, snapshotId };
}

/** Lifeboat's own volumes-info entry for a native snapshot (the backup's builders). */
function nativeInfo(options: {
  backupName: string;
  namespace: string;
  pvc: string;
  pv: string;
  volumeId: string;
  snapshotId: string;
  zone: string;
}): BackupVolumeInfo {
  return backupVolumeInfoOf({
    volume: {
      pvcNamespace: options.namespace,
      pvcName: options.pvc,
      pvName: options.pv,
      pvInfo: { reclaimPolicy: 'Delete', labels: { tier: 'gold' } },
    },
    outcome: {
      snapshot: nativeVolumeSnapshotOf({
        backupName: options.backupName,
        backupUID: 'u',
        location: 'default',
        pvName: options.pv,
        volumeId: options.volumeId,
        volumeType: 'io1',
        volumeAZ: options.zone,
        iops: 400,
        snapshotId: options.snapshotId,
        phase: 'Completed',
      }),
      startedAt: '2026-01-01T00:00:00Z',
      completedAt: '2026-01-01T00:00:05Z',
    },
  });
}

const volumeStep = { pollWithinMs: 10_000, pollIntervalMs: 200, bindTimeoutMs: 4_000 };

async function restore(
  kc: KubeConfig,
  store: ObjectStore,
  spec: Obj,
  extra: Partial<LocalRestoreOptions> = {},
): Promise<{ name: string; output: Obj }> {
  const name = uniqueName('rv');
  const output = (await runLocalRestore(
    { cluster: 'target', restore: { metadata: { name }, spec } },
    {
      cluster: new KubernetesCluster(kc),
      store,
      snapshotter: new EbsSnapshotter({ client: ec2() }),
      volumeStep,
      ...extra,
    },
  )) as Obj;
  return { name, output };
}

async function restoreVolumeInfo(store: ObjectStore, restoreName: string): Promise<Obj[]> {
  const raw = await store.get(restoreKeys(restoreName).volumeInfo);
  if (!raw) throw new Error(`no restore volume info for ${restoreName}`);
  return JSON.parse(gunzipSync(raw).toString('utf8')) as Obj[];
}

async function restoreResults(
  store: ObjectStore,
  restoreName: string,
): Promise<{ errors: Obj; warnings: Obj }> {
  const raw = await store.get(restoreKeys(restoreName).results);
  if (!raw) throw new Error(`no results for ${restoreName}`);
  return JSON.parse(gunzipSync(raw).toString('utf8')) as { errors: Obj; warnings: Obj };
}

async function readOrUndefined<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if ((error as { code?: number }).code === 404) return undefined;
    throw error;
  }
}

describe('restoring volumes by volumes-info', () => {
  let kc: KubeConfig;
  let core: CoreV1Api;
  beforeAll(() => {
    kc = kubeConfigFor(testEnv().clusters.source);
    core = kc.makeApiClient(CoreV1Api);
  });

  describe('a native snapshot', () => {
    let store: ObjectStore;
    const backupName = uniqueName('native');
    const namespace = uniqueName('vol-native');
    const pvName = uniqueName('pv-native');
    let original: { volumeId: string; snapshotId: string };

    beforeAll(async () => {
      store = await tempStore();
      original = await snapshotInMoto({ zone: `${region()}a`, pvName, backupName });
      await putBackup({
        store,
        name: backupName,
        namespace,
        pvs: [
          persistentVolume({
            name: pvName,
            namespace,
            claim: 'data',
            volumeId: original.volumeId,
            zone: `${region()}a`,
            reclaimPolicy: 'Delete',
            labels: { tier: 'gold' },
          }),
        ],
        pvcs: [claim({ name: 'data', namespace, volumeName: pvName })],
        volumeInfo: [
          nativeInfo({ backupName, namespace, pvc: 'data', pv: pvName, ...original, zone: `${region()}a` }),
        ],
      });
    });

    it('restores the PV pointing at a new volume created from the snapshot in the recorded zone', async () => {
      const { name, output } = await restore(kc, store, { backupName });
      expect(output).toMatchObject({ phase: 'Completed', failed: 0 });

      const [volume, ...others] = await volumesOfRestore(name);
      expect(others).toEqual([]);
      expect(volume).toMatchObject({
        SnapshotId: original.snapshotId,
        AvailabilityZone: `${region()}a`,
        VolumeType: 'io1',
        Iops: 400,
        State: 'available',
      });
      expect(volume?.VolumeId).not.toBe(original.volumeId);
      expect(volume?.Tags).toEqual(
        expect.arrayContaining([
          { Key: 'velero.io/restore', Value: name },
          { Key: 'velero.io/pv', Value: pvName },
          { Key: 'kubernetes.io/cluster/target', Value: 'owned' },
        ]),
      );

      const pv = await core.readPersistentVolume({ name: pvName });
      expect(pv.spec?.csi?.volumeHandle).toBe(volume?.VolumeId);
      expect(pv.metadata?.labels?.['velero.io/restore-name']).toBe(name);
      expect(pv.metadata?.annotations?.['pv.kubernetes.io/bound-by-controller']).toBeUndefined();
      expect(pv.spec?.claimRef?.uid).not.toBe('old-pvc-uid');
      // Binding info reset: the PV controller binds the restored PV and PVC to each other.
      const bound = await waitFor('the restored PVC to bind', async () => {
        const pvc = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'data' });
        return pvc.status?.phase === 'Bound' ? pvc : undefined;
      });
      expect(bound.spec?.volumeName).toBe(pvName);

      expect(await restoreVolumeInfo(store, name)).toEqual([
        {
          pvName,
          pvcName: 'data',
          pvcNamespace: namespace,
          restoreMethod: 'NativeSnapshot',
          snapshotDataMoved: false,
          nativeSnapshotInfo: {
            snapshotHandle: original.snapshotId,
            volumeType: 'io1',
            volumeAZ: `${region()}a`,
            iops: '400',
            Phase: '',
          },
        },
      ]);
    });

    it('renames the PV (velero-clone-<uuid>) when it exists and its namespace is mapped, in the requested zone', async () => {
      // The first test restored the PV under its own name; this restore maps its namespace.
      await waitFor('the PV of the first restore', () =>
        readOrUndefined(() => core.readPersistentVolume({ name: pvName })),
      );
      const mapped = uniqueName('vol-mapped');
      const { name, output } = await restore(kc, store, {
        backupName,
        namespaceMapping: { [namespace]: mapped },
        volumeAvailabilityZone: `${region()}b`,
      });
      expect(output).toMatchObject({ phase: 'Completed', failed: 0 });
      const [volume] = await volumesOfRestore(name);
      expect(volume).toMatchObject({ SnapshotId: original.snapshotId, AvailabilityZone: `${region()}b` });

      const pvc = await core.readNamespacedPersistentVolumeClaim({ namespace: mapped, name: 'data' });
      const clone = pvc.spec?.volumeName ?? '';
      expect(clone).toMatch(
        /^velero-clone-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
      const pv = await core.readPersistentVolume({ name: clone });
      expect(pv.metadata?.annotations?.['velero.io/original-pv-name']).toBe(pvName);
      expect(pv.spec?.csi?.volumeHandle).toBe(volume?.VolumeId);
      expect(pv.spec?.claimRef).toMatchObject({ namespace: mapped, name: 'data' });
      // The volume is in the requested zone, and so is the PV: labels and node affinity.
      expect(pv.metadata?.labels?.['topology.kubernetes.io/zone']).toBe(`${region()}b`);
      expect(pv.spec?.nodeAffinity?.required?.nodeSelectorTerms?.[0]?.matchExpressions?.[0]?.values).toEqual([
        `${region()}b`,
      ]);
      // The PV the first restore made is untouched.
      const first = await core.readPersistentVolume({ name: pvName });
      expect(first.spec?.csi?.volumeHandle).not.toBe(volume?.VolumeId);
      expect(await restoreVolumeInfo(store, name)).toEqual([
        expect.objectContaining({
          pvName: clone,
          pvcNamespace: mapped,
          restoreMethod: 'NativeSnapshot',
          nativeSnapshotInfo: expect.objectContaining({ volumeAZ: `${region()}b` }),
        }),
      ]);
    });
  });

  it('creates no volume with restorePVs false: the PV comes back as backed up, pointing at the old volume', async () => {
    const store = await tempStore();
    const backupName = uniqueName('nopv');
    const namespace = uniqueName('vol-nopv');
    const pvName = uniqueName('pv-nopv');
    const original = await snapshotInMoto({ zone: `${region()}a`, pvName, backupName });
    await putBackup({
      store,
      name: backupName,
      namespace,
      pvs: [
        persistentVolume({
          name: pvName,
          namespace,
          claim: 'data',
          volumeId: original.volumeId,
          zone: `${region()}a`,
          reclaimPolicy: 'Delete',
        }),
      ],
      pvcs: [claim({ name: 'data', namespace, volumeName: pvName })],
      volumeInfo: [
        nativeInfo({ backupName, namespace, pvc: 'data', pv: pvName, ...original, zone: `${region()}a` }),
      ],
    });
    const { name, output } = await restore(kc, store, { backupName, restorePVs: false });
    expect(output).toMatchObject({ phase: 'Completed', failed: 0 });
    expect(await volumesOfRestore(name)).toEqual([]);
    const pv = await core.readPersistentVolume({ name: pvName });
    expect(pv.spec?.csi?.volumeHandle).toBe(original.volumeId);
    const pvc = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'data' });
    expect(pvc.spec?.volumeName).toBe(pvName);
    expect(await restoreVolumeInfo(store, name)).toEqual([
      { pvName, pvcName: 'data', pvcNamespace: namespace, snapshotDataMoved: false },
    ]);
  });

  it('restores a CSI snapshot through a pre-provisioned VolumeSnapshotContent, a VolumeSnapshot and a PVC dataSource', async () => {
    await installVolumeSnapshotCrds(kc);
    const store = await tempStore();
    const backupName = uniqueName('csi');
    const namespace = uniqueName('vol-csi');
    const pvName = uniqueName('pv-csi');
    const size = 10 * 2 ** 30;
    await putBackup({
      store,
      name: backupName,
      namespace,
      pvs: [
        persistentVolume({
          name: pvName,
          namespace,
          claim: 'db',
          volumeId: 'vol-0c51ed0000000000a',
          zone: `${region()}a`,
          reclaimPolicy: 'Delete',
        }),
      ],
      pvcs: [claim({ name: 'db', namespace, volumeName: pvName })],
      // As Velero writes it (internal/volume/volumes_information.go).
      volumeInfo: [
        {
          pvcName: 'db',
          pvcNamespace: namespace,
          pvName,
          backupMethod: 'CSISnapshot',
          snapshotDataMoved: false,
          preserveLocalSnapshot: false,
          skipped: false,
          startTimestamp: '2026-01-01T00:00:00Z',
          result: 'succeeded',
          csiSnapshotInfo: {
            snapshotHandle: 'snap-0c51ed00000000001',
            size,
            driver: 'ebs.csi.aws.com',
            vscName: 'snapcontent-11111111-2222-3333-4444-555555555555',
            operationID: '',
            ReadyToUse: true,
          },
          pvInfo: { reclaimPolicy: 'Delete', labels: null },
        },
      ],
    });
    const { name, output } = await restore(kc, store, { backupName });
    expect(output).toMatchObject({ failed: 0 });

    // The PV is not restored: the PVC gets a new volume from its snapshot.
    expect(await readOrUndefined(() => core.readPersistentVolume({ name: pvName }))).toBeUndefined();
    const pvc = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'db' });
    expect(pvc.spec?.volumeName).toBeUndefined();
    const snapshotName = pvc.spec?.dataSource?.name ?? '';
    expect(pvc.spec?.dataSource).toEqual({
      apiGroup: 'snapshot.storage.k8s.io',
      kind: 'VolumeSnapshot',
      name: snapshotName,
    });
    expect(snapshotName).toMatch(/^[0-9a-f]{64}$/);
    // The request grew to the snapshot's size, which the new volume must hold.
    expect(pvc.spec?.resources?.requests?.storage).toBe(String(size));
    expect(pvc.metadata?.annotations?.['velero.io/volume-snapshot-name']).toBeUndefined();

    const custom = kc.makeApiClient(CustomObjectsApi);
    const content = (await custom.getClusterCustomObject({
      group: 'snapshot.storage.k8s.io',
      version: 'v1',
      plural: 'volumesnapshotcontents',
      name: snapshotName,
    })) as Obj;
    expect(content.spec).toEqual({
      deletionPolicy: 'Retain',
      driver: 'ebs.csi.aws.com',
      source: { snapshotHandle: 'snap-0c51ed00000000001' },
      volumeSnapshotRef: {
        apiVersion: 'snapshot.storage.k8s.io/v1',
        kind: 'VolumeSnapshot',
        namespace,
        name: snapshotName,
      },
    });
    expect((content.metadata as { labels: Obj }).labels['velero.io/restore-name']).toBe(name);
    const snapshot = (await custom.getNamespacedCustomObject({
      group: 'snapshot.storage.k8s.io',
      version: 'v1',
      plural: 'volumesnapshots',
      namespace,
      name: snapshotName,
    })) as Obj;
    expect(snapshot.spec).toEqual({ source: { volumeSnapshotContentName: snapshotName } });

    expect(await restoreVolumeInfo(store, name)).toEqual([
      {
        pvcName: 'db',
        pvcNamespace: namespace,
        restoreMethod: 'CSISnapshot',
        snapshotDataMoved: false,
        csiSnapshotInfo: {
          snapshotHandle: 'snap-0c51ed00000000001',
          size,
          driver: 'ebs.csi.aws.com',
          vscName: snapshotName,
          ReadyToUse: null,
        },
      },
    ]);
  });

  it('re-provisions skipped volumes, patches the PV that binds with the backed-up policy and labels, and gives up on one that never binds', async () => {
    const store = await tempStore();
    const backupName = uniqueName('skip');
    const namespace = uniqueName('vol-skip');
    const boundPv = uniqueName('pv-skip-a');
    const lonelyPv = uniqueName('pv-skip-b');
    // A class no provisioner serves: the test stands in for one with a matching PV.
    const storageClass = uniqueName('standin');
    const skipped = (pvc: string, pv: string): Obj => ({
      pvcName: pvc,
      pvcNamespace: namespace,
      pvName: pv,
      snapshotDataMoved: false,
      preserveLocalSnapshot: false,
      skipped: true,
      skippedReason: 'volumeSnapshot: skipped by the volume policy;',
      pvInfo: { reclaimPolicy: 'Delete', labels: { tier: 'gold', team: 'data' } },
    });
    await putBackup({
      store,
      name: backupName,
      namespace,
      pvs: [boundPv, lonelyPv].map((pv, i) =>
        persistentVolume({
          name: pv,
          namespace,
          claim: i === 0 ? 'cache' : 'scratch',
          volumeId: `vol-0${i}0000000000000000`,
          zone: `${region()}a`,
          reclaimPolicy: 'Delete',
          storageClass: i === 0 ? storageClass : uniqueName('nobody'),
          labels: { tier: 'gold', team: 'data' },
        }),
      ),
      pvcs: [
        claim({ name: 'cache', namespace, volumeName: boundPv, storageClass, storage: '1Gi' }),
        claim({
          name: 'scratch',
          namespace,
          volumeName: lonelyPv,
          storageClass: uniqueName('nobody'),
          storage: '1Gi',
        }),
      ],
      volumeInfo: [skipped('cache', boundPv), skipped('scratch', lonelyPv)],
    });
    const standIn = uniqueName('pv-standin');
    await core.createPersistentVolume({
      body: {
        metadata: { name: standIn, labels: { 'made-by': 'test' } },
        spec: {
          accessModes: ['ReadWriteOnce'],
          capacity: { storage: '1Gi' },
          persistentVolumeReclaimPolicy: 'Retain',
          storageClassName: storageClass,
          hostPath: { path: `/tmp/${standIn}` },
        },
      },
    });

    const { name, output } = await restore(kc, store, { backupName });
    expect(output).toMatchObject({ phase: 'Completed', failed: 0 });
    // Neither PV is restored; both PVCs are left to their storage class.
    for (const pv of [boundPv, lonelyPv])
      expect(await readOrUndefined(() => core.readPersistentVolume({ name: pv }))).toBeUndefined();
    for (const pvcName of ['cache', 'scratch']) {
      const pvc = await core.readNamespacedPersistentVolumeClaim({ namespace, name: pvcName });
      expect(pvc.metadata?.labels?.['velero.io/restore-name']).toBe(name);
      if (pvcName === 'scratch') expect(pvc.spec?.volumeName).toBeUndefined();
    }
    // The PV that bound got the backed-up reclaim policy and exactly the backed-up labels.
    const patched = await core.readPersistentVolume({ name: standIn });
    expect(patched.spec?.claimRef).toMatchObject({ namespace, name: 'cache' });
    expect(patched.spec?.persistentVolumeReclaimPolicy).toBe('Delete');
    expect(patched.metadata?.labels).toEqual({ tier: 'gold', team: 'data' });
    // The one that never bound is a warning after the bind timeout, not a hang.
    expect(output.warnings).toBeGreaterThanOrEqual(1);
    const results = await restoreResults(store, name);
    expect(JSON.stringify(results.warnings)).toContain(
      'PersistentVolumeClaim scratch: The PVC was not bound within 4s',
    );
    expect(await restoreVolumeInfo(store, name)).toEqual([
      { pvcName: 'cache', pvcNamespace: namespace, snapshotDataMoved: false },
      { pvcName: 'scratch', pvcNamespace: namespace, snapshotDataMoved: false },
    ]);
  });

  it.each<[string, Obj[] | undefined]>([
    ['an empty volumes-info (written before restores read it)', []],
    ['no volumes-info at all', undefined],
  ])('restores a backup with %s as before: the PV as backed up, binding reset', async (_, volumeInfo) => {
    const store = await tempStore();
    const backupName = uniqueName('legacy');
    const namespace = uniqueName('vol-legacy');
    const pvName = uniqueName('pv-legacy');
    await putBackup({
      store,
      name: backupName,
      namespace,
      pvs: [
        persistentVolume({
          name: pvName,
          namespace,
          claim: 'data',
          volumeId: 'vol-0e0e0e0e0e0e0e0e0',
          zone: `${region()}a`,
          reclaimPolicy: 'Delete',
        }),
      ],
      pvcs: [claim({ name: 'data', namespace, volumeName: pvName })],
      volumeInfo,
    });
    const { name, output } = await restore(kc, store, { backupName });
    expect(output).toMatchObject({ phase: 'Completed', created: 3, failed: 0 });
    const pv = await core.readPersistentVolume({ name: pvName });
    expect(pv.spec?.csi?.volumeHandle).toBe('vol-0e0e0e0e0e0e0e0e0');
    expect(pv.spec?.claimRef?.uid).not.toBe('old-pvc-uid');
    const pvc = await waitFor('the restored PVC to bind', async () => {
      const read = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'data' });
      return read.status?.phase === 'Bound' ? read : undefined;
    });
    expect(pvc.spec?.volumeName).toBe(pvName);
    expect(await volumesOfRestore(name)).toEqual([]);
    expect(await restoreVolumeInfo(store, name)).toEqual([]);
  });
});
