/**
 * CSI snapshots in a backup through the real snapshot API of the local apiserver (the
 * snapshot.storage.k8s.io CRDs) and a small stand-in CSI driver and snapshot controller that
 * snapshots volumes in the AWS emulator's EC2: the VolumeSnapshot with Velero's class choice, the
 * wait for readyToUse, its handle, size and driver in volumes-info, the operation in
 * itemoperations, and then the VolumeSnapshot and its content removed with the storage snapshot
 * kept (Retain first); a missing class and csiSnapshotTimeout fail the volume.
 */

import { gunzipSync } from 'node:zlib';
import {
  CreateVolumeCommand,
  DeleteVolumeCommand,
  DescribeSnapshotsCommand,
  EC2Client,
} from '@aws-sdk/client-ec2';
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EbsSnapshotter } from '../../../shared/adapters/ebs-snapshotter.js';
import type { BackupDocument } from '../../../shared/domain/storage/backup-document.js';
import { backupKeys } from '../../../shared/domain/storage/keys.js';
import type { BackupVolumeInfo } from '../../../shared/domain/volumes/info.js';
import type { ObjectStore } from '../../../shared/ports/object-store.js';
import { installCsiSnapshotApi } from '../../fixtures/volume-snapshot-class-crd.js';
import { backup, backupRequest, tempStore } from '../backup/support.js';
import {
  type CsiSnapshotController,
  createVeleroSnapshotClass,
  startCsiSnapshotController,
} from '../support/csi-snapshot-controller.js';
import { awsConfig, kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import { storedJson as json } from '../support/volumes.js';
import { waitFor } from '../support/wait.js';

type Obj = Record<string, unknown>;
const group = 'snapshot.storage.k8s.io';
const version = 'v1';
const ec2 = () => new EC2Client({ ...awsConfig(), maxAttempts: 3 });

describe('CSI snapshots in a backup', () => {
  // A driver of this test only: its class changes nothing for other tests' volumes.
  const driver = `${uniqueName('csi')}.test.lifeboat.dev`;
  const className = uniqueName('vsclass');
  const volumes: string[] = [];
  const pvs: string[] = [];
  const namespaces: string[] = [];
  let kc: KubeConfig;
  let api: CoreV1Api;
  let custom: CustomObjectsApi;
  let controller: CsiSnapshotController;

  const run = (options: { store: ObjectStore; name: string; spec: Obj }) =>
    backup({
      kc,
      store: options.store,
      request: backupRequest(options.name, options.spec),
      // CSI through the cluster itself (the runtime's default); EC2 for any native snapshot.
      extra: { snapshotter: new EbsSnapshotter({ client: ec2() }), volumePollSeconds: 1 },
    });

  /** A namespace with a pod, its PVC and a PV of `pvDriver` over a new EBS volume in moto. */
  async function workload(options: {
    pvDriver: string;
  }): Promise<{ namespace: string; pv: string; volume: string }> {
    const namespace = uniqueName('csi-vol');
    namespaces.push(namespace);
    await api.createNamespace({ body: { metadata: { name: namespace } } });
    const created = await ec2().send(
      new CreateVolumeCommand({
        AvailabilityZone: `${awsConfig().region}a`,
        Size: 8,
        VolumeType: 'gp3',
        TagSpecifications: [{ ResourceType: 'volume', Tags: [{ Key: 'Name', Value: 'csi-data' }] }],
      }),
    );
    const volume = created.VolumeId ?? '';
    volumes.push(volume);
    const pv = uniqueName('pv-csi');
    pvs.push(pv);
    await api.createPersistentVolume({
      body: {
        metadata: { name: pv },
        spec: {
          capacity: { storage: '8Gi' },
          accessModes: ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Delete',
          storageClassName: '',
          claimRef: { namespace, name: 'data' },
          csi: { driver: options.pvDriver, volumeHandle: volume },
        },
      },
    });
    await api.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: 'data', labels: { app: 'db' } },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName: '',
          volumeName: pv,
          resources: { requests: { storage: '8Gi' } },
        },
      },
    });
    await api.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: 'db' },
        spec: {
          containers: [{ name: 'db', image: 'postgres:16' }],
          volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
        },
      },
    });
    return { namespace, pv, volume };
  }

  beforeAll(async () => {
    kc = kubeConfigFor(testEnv().clusters.source);
    api = kc.makeApiClient(CoreV1Api);
    custom = kc.makeApiClient(CustomObjectsApi);
    await installCsiSnapshotApi(kc);
    // The class would delete the snapshot with its VolumeSnapshot: the backup must keep it.
    await createVeleroSnapshotClass(kc, { name: className, driver });
    controller = startCsiSnapshotController({ kc, ec2: ec2(), driver });
  });

  afterAll(async () => {
    await controller?.stop();
    await custom
      .deleteClusterCustomObject({ group, version, plural: 'volumesnapshotclasses', name: className })
      .catch(() => undefined);
    for (const ns of namespaces) await api.deleteNamespace({ name: ns }).catch(() => undefined);
    for (const pv of pvs) await api.deletePersistentVolume({ name: pv }).catch(() => undefined);
    for (const id of volumes)
      await ec2()
        .send(new DeleteVolumeCommand({ VolumeId: id }))
        .catch(() => undefined);
  });

  it('creates a VolumeSnapshot with the labelled class, waits until it is ready and records its content', async () => {
    const { namespace, pv, volume } = await workload({ pvDriver: driver });
    const store = await tempStore();
    const name = uniqueName('csi');
    const outcome = await run({ store, name, spec: { includedNamespaces: [namespace] } });
    expect(outcome).toMatchObject({ ok: true, output: { name, phase: 'Completed', errors: 0 } });
    expect(controller.errors).toEqual([]);

    // The VolumeSnapshot Velero would create: velero-<pvc>-…, the PVC's labels and the backup's,
    // as the snapshot controller saw it.
    const seen = controller.bound.filter((v) => record(v.metadata).namespace === namespace);
    expect(seen).toHaveLength(1);
    const vs = seen[0] as Obj;
    const vsName = String(record(vs.metadata).name);
    expect(vsName).toMatch(/^velero-data-[0-9a-f]{10}$/);
    expect(record(vs.metadata).labels).toEqual({ app: 'db', 'velero.io/backup-name': name });
    expect(vs.spec).toEqual({
      source: { persistentVolumeClaimName: 'data' },
      volumeSnapshotClassName: className,
    });
    const contentName = `snapcontent-${String(record(vs.metadata).uid)}`;

    // Velero (DeleteReadyVolumeSnapshot): once recorded, the VolumeSnapshot and its content leave
    // the cluster; the content was set to Retain first (its class says Delete), so the
    // controller kept the EC2 snapshot when it finalized the content.
    await waitFor('the content to be finalized', async () =>
      controller.deleted.find((d) => d.name === contentName),
    );
    const [removed] = controller.deleted.filter((d) => d.name === contentName);
    expect(removed).toMatchObject({ deletionPolicy: 'Retain', snapshotDeleted: false });
    const left = record(
      await custom.listNamespacedCustomObject({ group, version, namespace, plural: 'volumesnapshots' }),
    ).items;
    expect(left).toEqual([]);
    const gone = await custom
      .getClusterCustomObject({ group, version, plural: 'volumesnapshotcontents', name: contentName })
      .then(
        () => 'still there',
        (error: { code?: number }) => error.code,
      );
    expect(gone).toBe(404);
    const handle = removed?.snapshotHandle ?? '';
    const inEc2 = await ec2().send(new DescribeSnapshotsCommand({ SnapshotIds: [handle] }));
    expect(inEc2.Snapshots?.[0]).toMatchObject({ VolumeId: volume, State: 'completed' });
    const log = gunzipSync((await store.get(backupKeys(name).logs)) ?? new Uint8Array()).toString('utf8');
    expect(log).toContain(
      `Deleted VolumeSnapshot ${namespace}/${vsName} and VolumeSnapshotContent ${contentName}; the snapshot ${handle} is kept`,
    );

    const keys = backupKeys(name);
    const infos = await json<BackupVolumeInfo[]>(store, keys.volumeInfo);
    expect(infos).toEqual([
      {
        pvcName: 'data',
        pvcNamespace: namespace,
        pvName: pv,
        backupMethod: 'CSISnapshot',
        snapshotDataMoved: false,
        preserveLocalSnapshot: true,
        skipped: false,
        startTimestamp: expect.stringMatching(/Z$/),
        completionTimestamp: expect.stringMatching(/Z$/),
        result: 'succeeded',
        csiSnapshotInfo: {
          snapshotHandle: handle,
          size: 8 * 2 ** 30,
          driver,
          vscName: contentName,
          operationID: expect.stringMatching(
            new RegExp(`^${namespace}/${vsName}/\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$`),
          ),
          ReadyToUse: true,
        },
        pvInfo: { reclaimPolicy: 'Delete', labels: null },
      },
    ]);
    const operations = await json<Obj[]>(store, keys.itemOperations);
    expect(operations).toEqual([
      {
        spec: {
          backupName: name,
          backupUID: expect.any(String),
          backupItemAction: 'velero.io/csi-volumesnapshot-backupper',
          ResourceIdentifier: {
            Group: group,
            Resource: 'volumesnapshots',
            Namespace: namespace,
            Name: vsName,
          },
          OperationID: infos[0]?.csiSnapshotInfo?.operationID,
          PostOperationItems: [
            { Group: group, Resource: 'volumesnapshots', Namespace: namespace, Name: vsName },
          ],
        },
        status: expect.objectContaining({ phase: 'Completed', description: 'ReadyToUse' }),
      },
    ]);
    // No native snapshot: Velero's nil list, written as null.
    expect(await json(store, keys.volumeSnapshots)).toBeNull();
    const document = JSON.parse(
      Buffer.from((await store.get(keys.metadata)) ?? '').toString('utf8'),
    ) as BackupDocument;
    expect(document.status).toMatchObject({
      csiVolumeSnapshotsAttempted: 1,
      csiVolumeSnapshotsCompleted: 1,
      backupItemOperationsAttempted: 1,
      backupItemOperationsCompleted: 1,
    });
    expect(document.status).not.toHaveProperty('volumeSnapshotsAttempted');
  });

  it('fails the volume when no VolumeSnapshotClass serves its driver, with Velero’s reason', async () => {
    const { namespace } = await workload({ pvDriver: `other-${driver}` });
    const store = await tempStore();
    const name = uniqueName('csi-noclass');
    const outcome = await run({ store, name, spec: { includedNamespaces: [namespace] } });
    expect(outcome).toMatchObject({ ok: true, output: { phase: 'PartiallyFailed' } });
    const infos = await json<BackupVolumeInfo[]>(store, backupKeys(name).volumeInfo);
    expect(infos).toEqual([expect.objectContaining({ backupMethod: 'CSISnapshot', result: 'failed' })]);
    const results = await json<{ errors: { namespaces?: Record<string, string[]> } }>(
      store,
      backupKeys(name).results,
    );
    expect(results.errors.namespaces?.[namespace]?.join('\n')).toContain(
      `failed to get VolumeSnapshotClass for provisioner other-${driver}`,
    );
  });

  it('fails a snapshot that is not ready within csiSnapshotTimeout', async () => {
    await controller.stop();
    try {
      const { namespace } = await workload({ pvDriver: driver });
      const store = await tempStore();
      const name = uniqueName('csi-late');
      const outcome = await run({
        store,
        name,
        spec: { includedNamespaces: [namespace], csiSnapshotTimeout: '2s' },
      });
      expect(outcome).toMatchObject({ ok: true, output: { phase: 'PartiallyFailed' } });
      const operations = await json<{ status: Obj }[]>(store, backupKeys(name).itemOperations);
      expect(operations[0]?.status).toMatchObject({
        phase: 'Failed',
        error: expect.stringContaining('Asynchronous action timed out (csiSnapshotTimeout 2s)'),
      });
      const document = JSON.parse(
        Buffer.from((await store.get(backupKeys(name).metadata)) ?? '').toString('utf8'),
      ) as BackupDocument;
      expect(document.status).toMatchObject({
        csiVolumeSnapshotsAttempted: 1,
        backupItemOperationsFailed: 1,
      });
      expect(document.status).not.toHaveProperty('csiVolumeSnapshotsCompleted');
      // The volume's one entry says it failed; the VolumeSnapshot, never bound, is left and said so.
      const [info, ...others] = await json<BackupVolumeInfo[]>(store, backupKeys(name).volumeInfo);
      expect(others).toEqual([]);
      expect(info).toMatchObject({
        pvcName: 'data',
        pvcNamespace: namespace,
        backupMethod: 'CSISnapshot',
        skipped: false,
        result: 'failed',
        csiSnapshotInfo: { snapshotHandle: '', vscName: '', driver, ReadyToUse: null },
      });
      expect(info).not.toHaveProperty('completionTimestamp');
      const results = await json<{
        errors: { namespaces?: Record<string, string[]> };
        warnings: { namespaces?: Record<string, string[]> };
      }>(store, backupKeys(name).results);
      expect(results.errors.namespaces?.[namespace]).toEqual([
        expect.stringMatching(
          /^CSI snapshot of PVC .*\/data \(PV .*\) failed: Asynchronous action timed out \(csiSnapshotTimeout 2s\)/,
        ),
      ]);
      expect(results.warnings.namespaces?.[namespace]).toEqual([
        expect.stringMatching(
          /^VolumeSnapshot .*\/velero-data-[0-9a-f]{10} is left in the cluster: it was never bound/,
        ),
      ]);
    } finally {
      controller = startCsiSnapshotController({ kc, ec2: ec2(), driver });
    }
  });
});

function record(v: unknown): Obj {
  return typeof v === 'object' && v !== null ? (v as Obj) : {};
}
