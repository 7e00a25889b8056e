import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BackupVolumeInfo } from '../../../../../shared/domain/volumes/info-shapes.js';
import { persistentVolumeAction } from '../../../../../shared/domain/volumes/pv-action.js';
import { planVolumeRestore } from '../../../../../shared/domain/volumes/restore.js';
import {
  VOLUME_SNAPSHOT_CONTENTS,
  VOLUME_SNAPSHOTS,
} from '../../../../../shared/domain/volumes/restore-claims.js';
import type {
  PersistentVolumeAction,
  PvRestoreFacts,
} from '../../../../../shared/domain/volumes/restore-plan.js';

type Obj = Record<string, unknown>;
const specOf = (o: Obj | undefined): Obj => (o?.spec ?? {}) as Obj;

const ebsPv: PvRestoreFacts = {
  name: 'pv-1',
  claimNamespace: 'shop',
  reclaimPolicy: 'Delete',
  ebs: true,
};

const native = (extra: Partial<BackupVolumeInfo> = {}): BackupVolumeInfo => ({
  pvcName: 'data',
  pvcNamespace: 'shop',
  pvName: 'pv-1',
  backupMethod: 'NativeSnapshot',
  snapshotDataMoved: false,
  preserveLocalSnapshot: false,
  skipped: false,
  nativeSnapshotInfo: {
    snapshotHandle: 'snap-1',
    volumeType: 'io1',
    volumeAZ: 'us-east-1a',
    iops: '400',
    Phase: 'Completed',
  },
  pvInfo: { reclaimPolicy: 'Delete', labels: { tier: 'gold' } },
  ...extra,
});
const skipped = (reclaimPolicy: string): BackupVolumeInfo => ({
  pvcName: 'data',
  pvcNamespace: 'shop',
  pvName: 'pv-1',
  snapshotDataMoved: false,
  preserveLocalSnapshot: false,
  skipped: true,
  skippedReason: 'any: skipped by policy;',
  pvInfo: { reclaimPolicy, labels: null },
});
const method = (backupMethod: BackupVolumeInfo['backupMethod']): BackupVolumeInfo => ({
  ...skipped('Delete'),
  skipped: false,
  backupMethod,
});

const source = {
  snapshotHandle: 'snap-1',
  volumeType: 'io1',
  iops: 400,
  recordedAvailabilityZone: 'us-east-1a',
};

describe('what a restore does with a backed-up PV (Velero restore.go by backupMethod)', () => {
  const cases: [string, Parameters<typeof persistentVolumeAction>[0], PersistentVolumeAction][] = [
    [
      'a PV the volumes-info does not name is restored as backed up',
      { pv: ebsPv, exists: false, cloneName: () => 'x' },
      { action: 'restore', reason: 'the backup has no volume info for it' },
    ],
    [
      'a native snapshot is re-created in the recorded zone, with type and IOPS',
      { pv: ebsPv, info: native(), exists: false, cloneName: () => 'x' },
      { action: 'from-snapshot', source: { ...source, availabilityZone: 'us-east-1a' } },
    ],
    [
      'a native snapshot is re-created in the zone the request names',
      { pv: ebsPv, info: native(), exists: false, availabilityZone: 'us-east-1c', cloneName: () => 'x' },
      { action: 'from-snapshot', source: { ...source, availabilityZone: 'us-east-1c' } },
    ],
    [
      'a native snapshot of a PV that exists creates no volume (Velero GH #609)',
      { pv: ebsPv, info: native(), exists: true, cloneName: () => 'x' },
      { action: 'restore', reason: 'it already exists in the cluster: no volume is created' },
    ],
    [
      'a native snapshot of a PV that exists, claimed in a mapped namespace, is renamed',
      {
        pv: ebsPv,
        info: native(),
        exists: true,
        namespaceMapping: { shop: 'shop-copy' },
        cloneName: () => 'velero-clone-1',
      },
      {
        action: 'from-snapshot',
        source: { ...source, availabilityZone: 'us-east-1a' },
        rename: 'velero-clone-1',
      },
    ],
    [
      'a mapped namespace alone renames nothing when the PV does not exist',
      { pv: ebsPv, info: native(), exists: false, namespaceMapping: { shop: 'x' }, cloneName: () => 'c' },
      { action: 'from-snapshot', source: { ...source, availabilityZone: 'us-east-1a' } },
    ],
    [
      'restorePVs false restores the PV as backed up, pointing at the old volume',
      { pv: ebsPv, info: native(), restorePVs: false, exists: false, cloneName: () => 'x' },
      { action: 'restore', reason: 'restorePVs is false: no volume is created from its snapshot' },
    ],
    [
      'restorePVs false still renames an existing PV of a mapped namespace, as Velero does',
      {
        pv: ebsPv,
        info: native(),
        restorePVs: false,
        exists: true,
        namespaceMapping: { shop: 'x' },
        cloneName: () => 'velero-clone-2',
      },
      {
        action: 'restore',
        reason: 'restorePVs is false: no volume is created from its snapshot',
        rename: 'velero-clone-2',
      },
    ],
    [
      'a native snapshot without a snapshot id fails',
      {
        pv: ebsPv,
        info: native({
          nativeSnapshotInfo: {
            snapshotHandle: '',
            volumeType: 'gp3',
            volumeAZ: 'a',
            iops: '0',
            Phase: 'Failed',
          },
        }),
        exists: false,
        cloneName: () => 'x',
      },
      { action: 'fail', reason: 'its native snapshot has no snapshot id' },
    ],
    [
      'a native snapshot of a PV that is not EBS fails',
      { pv: { ...ebsPv, ebs: false }, info: native(), exists: false, cloneName: () => 'x' },
      { action: 'fail', reason: 'it is neither an EBS CSI nor an in-tree EBS volume' },
    ],
    [
      "a pod volume backup of Velero's node agent re-provisions, with a warning that its data cannot come back",
      { pv: ebsPv, info: method('PodVolumeBackup'), exists: false, cloneName: () => 'x' },
      {
        action: 'reprovision',
        reason: 'it has a pod volume backup to be restored',
        warning: expect.stringContaining('whose repository Lifeboat cannot read') as unknown as string,
      },
    ],
    [
      'a CSI snapshot re-provisions (the PVC fills from a VolumeSnapshot)',
      { pv: ebsPv, info: method('CSISnapshot'), exists: false, cloneName: () => 'x' },
      { action: 'reprovision', reason: 'it has a related CSI VolumeSnapshot' },
    ],
    [
      'a skipped volume with reclaim policy Delete re-provisions',
      { pv: ebsPv, info: skipped('Delete'), exists: false, cloneName: () => 'x' },
      { action: 'reprovision', reason: "it doesn't have a snapshot and its reclaim policy is Delete" },
    ],
    [
      'a skipped volume with reclaim policy Retain is restored as backed up',
      {
        pv: { ...ebsPv, reclaimPolicy: 'Retain' },
        info: skipped('Retain'),
        exists: false,
        cloneName: () => 'x',
      },
      { action: 'restore', reason: "it doesn't have a snapshot and its reclaim policy is not Delete" },
    ],
    [
      "the PV's own reclaim policy wins over the recorded one",
      {
        pv: { ...ebsPv, reclaimPolicy: 'Retain' },
        info: skipped('Delete'),
        exists: false,
        cloneName: () => 'x',
      },
      { action: 'restore', reason: "it doesn't have a snapshot and its reclaim policy is not Delete" },
    ],
  ];
  it.each(cases)('%s', (_, input, expected) => {
    expect(persistentVolumeAction(input)).toEqual(expected);
  });

  it('fails a native snapshot with no recorded zone unless the request names one', () => {
    const info = native({
      nativeSnapshotInfo: {
        snapshotHandle: 'snap-1',
        volumeType: 'gp3',
        volumeAZ: '',
        iops: '0',
        Phase: 'Completed',
      },
    });
    expect(persistentVolumeAction({ pv: ebsPv, info, exists: false, cloneName: () => 'x' })).toMatchObject({
      action: 'fail',
      reason: expect.stringContaining('volumeAvailabilityZone'),
    });
    expect(
      persistentVolumeAction({
        pv: ebsPv,
        info,
        exists: false,
        availabilityZone: 'eu-west-1b',
        cloneName: () => 'x',
      }),
    ).toMatchObject({
      action: 'from-snapshot',
      source: { availabilityZone: 'eu-west-1b', volumeType: 'gp3' },
    });
  });

  it('never creates a volume when restorePVs is false, whatever the other facts (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<BackupVolumeInfo['backupMethod']>(
          'NativeSnapshot',
          'CSISnapshot',
          'PodVolumeBackup',
          undefined,
        ),
        fc.boolean(),
        fc.boolean(),
        fc.constantFrom('Delete', 'Retain', undefined),
        (backupMethod, exists, mapped, reclaimPolicy) => {
          const action = persistentVolumeAction({
            pv: { ...ebsPv, ...(reclaimPolicy ? { reclaimPolicy } : { reclaimPolicy: undefined }) },
            info: { ...native(), backupMethod },
            restorePVs: false,
            exists,
            ...(mapped ? { namespaceMapping: { shop: 'other' } } : {}),
            cloneName: () => 'c',
          });
          expect(action.action).not.toBe('from-snapshot');
        },
      ),
    );
  });
});

const pvObject = (name: string, extra: Obj = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: {
    name,
    labels: { 'topology.kubernetes.io/zone': 'us-east-1a' },
    annotations: { 'pv.kubernetes.io/provisioned-by': 'ebs.csi.aws.com' },
  },
  spec: {
    capacity: { storage: '8Gi' },
    csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-0aaa' },
    persistentVolumeReclaimPolicy: 'Delete',
    claimRef: { namespace: 'shop', name: 'data', uid: 'u1' },
    nodeAffinity: {
      required: {
        nodeSelectorTerms: [
          {
            matchExpressions: [
              { key: 'topology.ebs.csi.aws.com/zone', operator: 'In', values: ['us-east-1a'] },
            ],
          },
        ],
      },
    },
  },
  ...extra,
});
const pvcObject = (name: string, volumeName: string, extra: Obj = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: 'shop', annotations: { 'velero.io/volume-snapshot-name': 'velero-data-abc' } },
  spec: {
    accessModes: ['ReadWriteOnce'],
    resources: { requests: { storage: '1Gi' } },
    storageClassName: 'gp3',
    volumeName,
    ...extra,
  },
});

const plan = (overrides: Partial<Parameters<typeof planVolumeRestore>[0]>) =>
  planVolumeRestore({
    infos: [],
    pvs: [],
    pvcs: [],
    existingPvs: new Set(),
    existingPvcs: new Set(),
    names: { clone: (pv) => `velero-clone-${pv}`, snapshot: (pvc) => `vs-${pvc.namespace}-${pvc.name}` },
    ...overrides,
  });

describe('the volume plan of a restore', () => {
  it('leaves PVs and PVCs alone when the backup has no volumes-info', () => {
    const pv = pvObject('pv-1');
    const pvc = pvcObject('data', 'pv-1');
    const result = plan({ pvs: [pv], pvcs: [pvc] });
    expect(result).toEqual({
      pvs: [pv],
      pvcs: [pvc],
      snapshots: [],
      native: [],
      provisioned: [],
      restoreInfos: [],
      notes: [],
    });
  });

  it('plans a native volume: the PV waits with no volume id, the PVC keeps its volume', () => {
    const result = plan({ infos: [native()], pvs: [pvObject('pv-1')], pvcs: [pvcObject('data', 'pv-1')] });
    expect(result.native).toEqual([
      {
        ...source,
        availabilityZone: 'us-east-1a',
        pvName: 'pv-1',
        sourcePvName: 'pv-1',
        pvcNamespace: 'shop',
        pvcName: 'data',
      },
    ]);
    expect(result.pvs).toHaveLength(1);
    expect(specOf(result.pvs[0]).csi).toEqual({ driver: 'ebs.csi.aws.com', volumeHandle: '' });
    expect(specOf(result.pvcs[0]).volumeName).toBe('pv-1');
    expect(result.restoreInfos).toEqual([]);
  });

  it('moves the PV to the requested zone: labels and node affinity', () => {
    const result = plan({
      infos: [native()],
      pvs: [pvObject('pv-1')],
      pvcs: [],
      availabilityZone: 'us-east-1b',
    });
    const pv = result.pvs[0] as { metadata: { labels: Obj }; spec: { nodeAffinity: unknown } };
    expect(pv.metadata.labels['topology.kubernetes.io/zone']).toBe('us-east-1b');
    expect(JSON.stringify(pv.spec.nodeAffinity)).toContain('"values":["us-east-1b"]');
    expect(JSON.stringify(pv.spec.nodeAffinity)).not.toContain('us-east-1a');
  });

  it('renames an existing PV of a mapped namespace and points its PVC at the new name', () => {
    const result = plan({
      infos: [native()],
      pvs: [pvObject('pv-1')],
      pvcs: [pvcObject('data', 'pv-1')],
      namespaceMapping: { shop: 'shop-copy' },
      existingPvs: new Set(['pv-1']),
    });
    const pv = result.pvs[0] as { metadata: { name: string; annotations: Obj } };
    expect(pv.metadata.name).toBe('velero-clone-pv-1');
    expect(pv.metadata.annotations['velero.io/original-pv-name']).toBe('pv-1');
    expect(specOf(result.pvcs[0]).volumeName).toBe('velero-clone-pv-1');
    expect(result.native[0]).toMatchObject({
      pvName: 'velero-clone-pv-1',
      sourcePvName: 'pv-1',
      pvcNamespace: 'shop-copy',
    });
  });

  it('restores a CSI snapshot through a pre-provisioned VolumeSnapshotContent and VolumeSnapshot', () => {
    const info: BackupVolumeInfo = {
      ...method('CSISnapshot'),
      csiSnapshotInfo: {
        snapshotHandle: 'snap-9',
        size: 5 * 2 ** 30,
        driver: 'ebs.csi.aws.com',
        vscName: 'snapcontent-1',
        ReadyToUse: true,
      },
      pvInfo: { reclaimPolicy: 'Retain', labels: { tier: 'gold' } },
    };
    const result = plan({
      infos: [info],
      pvs: [pvObject('pv-1')],
      pvcs: [pvcObject('data', 'pv-1')],
      namespaceMapping: { shop: 'shop-copy' },
    });
    expect(result.pvs).toEqual([]);
    expect(result.snapshots).toEqual([
      {
        groupResource: VOLUME_SNAPSHOT_CONTENTS,
        object: {
          apiVersion: 'snapshot.storage.k8s.io/v1',
          kind: 'VolumeSnapshotContent',
          metadata: { name: 'vs-shop-data' },
          spec: {
            deletionPolicy: 'Retain',
            driver: 'ebs.csi.aws.com',
            source: { snapshotHandle: 'snap-9' },
            volumeSnapshotRef: {
              apiVersion: 'snapshot.storage.k8s.io/v1',
              kind: 'VolumeSnapshot',
              namespace: 'shop-copy',
              name: 'vs-shop-data',
            },
          },
        },
      },
      {
        groupResource: VOLUME_SNAPSHOTS,
        object: {
          apiVersion: 'snapshot.storage.k8s.io/v1',
          kind: 'VolumeSnapshot',
          metadata: {
            name: 'vs-shop-data',
            namespace: 'shop',
            annotations: { 'velero.io/csi-vsc-deletion-policy': 'Retain' },
          },
          spec: { source: { volumeSnapshotContentName: 'vs-shop-data' } },
        },
      },
    ]);
    const pvc = result.pvcs[0] as { metadata: { annotations: Obj }; spec: Obj };
    expect(pvc.spec.volumeName).toBeUndefined();
    expect(pvc.spec.dataSource).toEqual({
      apiGroup: 'snapshot.storage.k8s.io',
      kind: 'VolumeSnapshot',
      name: 'vs-shop-data',
    });
    // The request grows to the snapshot's size (Velero setPVCStorageResourceRequest).
    expect(pvc.spec.resources).toEqual({ requests: { storage: String(5 * 2 ** 30) } });
    expect(pvc.metadata.annotations['velero.io/volume-snapshot-name']).toBeUndefined();
    expect(result.provisioned).toEqual([
      { pvcNamespace: 'shop-copy', pvcName: 'data', sourcePvName: 'pv-1', pvInfo: info.pvInfo },
    ]);
    expect(result.restoreInfos).toEqual([
      {
        pvcName: 'data',
        pvcNamespace: 'shop-copy',
        restoreMethod: 'CSISnapshot',
        snapshotDataMoved: false,
        csiSnapshotInfo: {
          snapshotHandle: 'snap-9',
          size: 5 * 2 ** 30,
          driver: 'ebs.csi.aws.com',
          vscName: 'vs-shop-data',
          ReadyToUse: null,
        },
      },
    ]);
  });

  it('gives a CSI volume an empty claim with restorePVs false, and makes no snapshot objects', () => {
    const info: BackupVolumeInfo = {
      ...method('CSISnapshot'),
      csiSnapshotInfo: { snapshotHandle: 'snap-9', size: 1, driver: 'd', vscName: 'v', ReadyToUse: true },
    };
    const result = plan({
      infos: [info],
      pvs: [pvObject('pv-1')],
      pvcs: [pvcObject('data', 'pv-1', { dataSource: { kind: 'X' } })],
      restorePVs: false,
    });
    expect(result.snapshots).toEqual([]);
    expect(result.pvs).toEqual([]);
    const spec = result.pvcs[0]?.spec as Obj;
    expect(spec.volumeName).toBeUndefined();
    expect(spec.dataSource).toBeUndefined();
  });

  it('leaves a CSI volume whose PVC exists alone', () => {
    const info: BackupVolumeInfo = {
      ...method('CSISnapshot'),
      csiSnapshotInfo: { snapshotHandle: 'snap-9', size: 1, driver: 'd', vscName: 'v', ReadyToUse: true },
    };
    const pvc = pvcObject('data', 'pv-1');
    const result = plan({ infos: [info], pvs: [], pvcs: [pvc], existingPvcs: new Set(['shop/data']) });
    expect(result.snapshots).toEqual([]);
    expect(result.pvcs).toEqual([pvc]);
    expect(result.provisioned).toEqual([]);
  });

  it('re-provisions a skipped volume with reclaim policy Delete: no PV, no volume name, PVInfo kept for the patch', () => {
    const result = plan({
      infos: [skipped('Delete')],
      pvs: [pvObject('pv-1')],
      pvcs: [pvcObject('data', 'pv-1')],
    });
    expect(result.pvs).toEqual([]);
    expect(specOf(result.pvcs[0]).volumeName).toBeUndefined();
    expect(result.provisioned).toEqual([
      {
        pvcNamespace: 'shop',
        pvcName: 'data',
        sourcePvName: 'pv-1',
        pvInfo: { reclaimPolicy: 'Delete', labels: null },
      },
    ]);
    expect(result.restoreInfos).toEqual([
      { pvcName: 'data', pvcNamespace: 'shop', snapshotDataMoved: false },
    ]);
    expect(result.notes).toContainEqual(
      expect.objectContaining({
        level: 'info',
        message: expect.stringContaining('Dynamically re-provisioning'),
      }),
    );
  });

  it('re-provisions a PVC by the volumes-info even when its PV is not part of the restore', () => {
    const result = plan({ infos: [method('PodVolumeBackup')], pvs: [], pvcs: [pvcObject('data', 'pv-1')] });
    expect(specOf(result.pvcs[0]).volumeName).toBeUndefined();
    expect(result.notes).toContainEqual(
      expect.objectContaining({ level: 'warning', namespace: 'shop', name: 'data' }),
    );
  });

  it('restores a skipped Retain volume as backed up and lists it in the restore volume info', () => {
    const pv = pvObject('pv-1', {});
    (pv.spec as Obj).persistentVolumeReclaimPolicy = 'Retain';
    const result = plan({ infos: [skipped('Retain')], pvs: [pv], pvcs: [pvcObject('data', 'pv-1')] });
    expect(result.pvs).toEqual([pv]);
    expect(specOf(result.pvcs[0]).volumeName).toBe('pv-1');
    expect(result.restoreInfos).toEqual([
      { pvName: 'pv-1', pvcNamespace: 'shop', pvcName: 'data', snapshotDataMoved: false },
    ]);
  });

  it('reports a PV it cannot restore as an error and leaves it out', () => {
    const info = native({
      nativeSnapshotInfo: {
        snapshotHandle: '',
        volumeType: 'gp3',
        volumeAZ: 'a',
        iops: '0',
        Phase: 'Failed',
      },
    });
    const result = plan({ infos: [info], pvs: [pvObject('pv-1')], pvcs: [] });
    expect(result.pvs).toEqual([]);
    expect(result.notes).toEqual([expect.objectContaining({ level: 'error', name: 'pv-1' })]);
  });

  it('decides every PV exactly once: restored, re-created or left out (property)', () => {
    const methods = fc.constantFrom<BackupVolumeInfo['backupMethod']>(
      'NativeSnapshot',
      'CSISnapshot',
      'PodVolumeBackup',
      undefined,
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(methods, fc.constantFrom('Delete', 'Retain'), fc.boolean()), { maxLength: 8 }),
        fc.boolean(),
        (volumes, restorePVs) => {
          const infos = volumes.map(([m, policy], i) => ({
            ...native(),
            pvName: `pv-${i}`,
            pvcName: `c-${i}`,
            backupMethod: m,
            pvInfo: { reclaimPolicy: policy, labels: null },
          }));
          const pvs = volumes.map(([, policy], i) => {
            const pv = pvObject(`pv-${i}`);
            (pv.spec as Obj).persistentVolumeReclaimPolicy = policy;
            return pv;
          });
          const existingPvs = new Set(volumes.flatMap(([, , exists], i) => (exists ? [`pv-${i}`] : [])));
          const result = plan({ infos, pvs, pvcs: [], restorePVs, existingPvs });
          const restored = result.pvs.map((pv) => (pv.metadata as { name: string }).name);
          expect(new Set(restored).size).toBe(restored.length);
          for (const n of result.native) expect(restored).toContain(n.pvName);
          if (!restorePVs) expect(result.native).toHaveLength(0);
        },
      ),
    );
  });
});

describe('a volume whose data the data mover moved', () => {
  const movement = {
    dataMover: 'lifeboat',
    uploaderType: 'lifeboat-block',
    retainedSnapshot: 'snap-1',
    snapshotHandle: 'nightly_vol-0aaa_20260101T000000Z',
    operationID: 'nightly_vol-0aaa_20260101T000000Z',
    size: 8 * 1024 ** 3,
    Phase: 'Completed',
  };
  const moved = (extra: Partial<BackupVolumeInfo> = {}): BackupVolumeInfo =>
    native({ snapshotDataMoved: true, snapshotDataMovementInfo: movement, ...extra });
  const csiMoved = (): BackupVolumeInfo => {
    const { nativeSnapshotInfo: _, ...rest } = moved();
    return {
      ...rest,
      backupMethod: 'CSISnapshot',
      csiSnapshotInfo: {
        snapshotHandle: 'snap-2',
        size: 1,
        driver: 'ebs.csi.aws.com',
        vscName: 'c',
        ReadyToUse: true,
      },
    };
  };
  const movedData = (backupMethod: 'NativeSnapshot' | 'CSISnapshot') => ({
    manifestId: movement.snapshotHandle,
    backupMethod,
    info: movement,
  });

  it('is written from the repository where a native one would be re-created, with its type and IOPS', () => {
    expect(persistentVolumeAction({ pv: ebsPv, info: moved(), exists: false, cloneName: () => 'x' })).toEqual(
      {
        action: 'from-snapshot',
        source: { ...source, availabilityZone: 'us-east-1a', movedData: movedData('NativeSnapshot') },
      },
    );
  });

  it('moved from a CSI snapshot, lands in the PV’s own zone as gp3, or in the zone the request names', () => {
    const pv = { ...ebsPv, zone: 'us-east-1b' };
    const expected = (availabilityZone: string) => ({
      action: 'from-snapshot',
      source: {
        snapshotHandle: 'snap-1',
        volumeType: 'gp3',
        availabilityZone,
        recordedAvailabilityZone: 'us-east-1b',
        movedData: movedData('CSISnapshot'),
      },
    });
    expect(persistentVolumeAction({ pv, info: csiMoved(), exists: false, cloneName: () => 'x' })).toEqual(
      expected('us-east-1b'),
    );
    expect(
      persistentVolumeAction({
        pv,
        info: csiMoved(),
        exists: false,
        availabilityZone: 'us-west-2a',
        elsewhere: true,
        cloneName: () => 'x',
      }),
    ).toEqual(expected('us-west-2a'));
  });

  it.each<[string, Partial<BackupVolumeInfo>, PersistentVolumeAction]>([
    [
      'moved by Velero’s kopia data mover: re-provisioned, warned',
      { snapshotDataMovementInfo: { ...movement, dataMover: 'velero', uploaderType: 'kopia' } },
      {
        action: 'reprovision',
        reason: 'its data was moved by a data mover Lifeboat cannot read',
        warning:
          'its data was moved by data mover "velero" (kopia), which Lifeboat cannot restore: the volume is re-provisioned empty',
      },
    ],
    [
      'whose movement failed: an error',
      { snapshotDataMovementInfo: { ...movement, Phase: 'Failed', snapshotHandle: '' } },
      {
        action: 'fail',
        reason: 'its data movement did not complete (phase Failed): there is no data to restore',
      },
    ],
  ])('%s', (_, extra, expected) => {
    expect(
      persistentVolumeAction({ pv: ebsPv, info: moved(extra), exists: false, cloneName: () => 'x' }),
    ).toEqual(expected);
  });

  it('keeps an existing PV, and needs a zone from somewhere', () => {
    expect(persistentVolumeAction({ pv: ebsPv, info: moved(), exists: true, cloneName: () => 'x' })).toEqual({
      action: 'restore',
      reason: 'it already exists in the cluster: no volume is created',
    });
    expect(
      persistentVolumeAction({ pv: ebsPv, info: csiMoved(), exists: false, cloneName: () => 'x' }),
    ).toEqual({
      action: 'fail',
      reason:
        'neither its backup nor the PV names an availability zone, and the restore names none (volumeAvailabilityZone)',
    });
  });

  it('fails a native snapshot without a copy where the request sends volumes, saying so', () => {
    expect(
      persistentVolumeAction({
        pv: ebsPv,
        info: native(),
        exists: false,
        elsewhere: true,
        home: { account: '210987654321', region: 'us-west-2' },
        cloneName: () => 'x',
      }),
    ).toEqual({
      action: 'fail',
      reason:
        "its native snapshot snap-1 stays in the backup's account and region, and the backup has no copy in account 210987654321 region us-west-2 (copySnapshots)",
    });
  });

  it('is planned with its PV waiting and its PVC bound to it, CSI or native', () => {
    for (const info of [moved(), csiMoved()]) {
      const result = plan({
        infos: [info],
        pvs: [pvObject('pv-1')],
        pvcs: [pvcObject('data', 'pv-1')],
      });
      expect(result.native).toEqual([
        expect.objectContaining({
          pvName: 'pv-1',
          pvcName: 'data',
          availabilityZone: 'us-east-1a',
          movedData: movedData(info.backupMethod as 'NativeSnapshot' | 'CSISnapshot'),
        }),
      ]);
      expect(specOf(result.pvs[0]).csi).toEqual({ driver: 'ebs.csi.aws.com', volumeHandle: '' });
      expect(specOf(result.pvcs[0]).volumeName).toBe('pv-1');
      expect(specOf(result.pvcs[0]).dataSource).toBeUndefined();
      expect(result.snapshots).toEqual([]);
      expect(result.notes).toContainEqual({
        level: 'info',
        message: `Restoring persistent volume from the data mover's repository (manifest ${movement.snapshotHandle})`,
        name: 'pv-1',
      });
    }
  });
});

describe("a volume whose files Lifeboat's data mover backed up (pvbInfo)", () => {
  const files = (Phase = 'Completed'): BackupVolumeInfo => ({
    ...method('PodVolumeBackup'),
    pvbInfo: {
      snapshotHandle: 'nightly_pv.pv-1_20260101T000000Z',
      size: 10,
      uploaderType: 'lifeboat-file',
      volumeName: 'data',
      podName: 'db',
      podNamespace: 'shop',
      nodeName: '',
      Phase,
    },
  });

  it('is re-provisioned with no warning, its files to come back once the PVC is bound', () => {
    expect(persistentVolumeAction({ pv: ebsPv, info: files(), exists: false, cloneName: () => 'x' })).toEqual(
      {
        action: 'reprovision',
        reason: 'it has a pod volume backup to be restored',
      },
    );
    const result = plan({
      infos: [files()],
      pvs: [pvObject('pv-1')],
      pvcs: [pvcObject('data', 'pv-1')],
      namespaceMapping: { shop: 'shop-2' },
    });
    expect(result.provisioned).toEqual([
      {
        pvcNamespace: 'shop-2',
        pvcName: 'data',
        sourcePvName: 'pv-1',
        pvInfo: { reclaimPolicy: 'Delete', labels: null },
        files: { manifestId: 'nightly_pv.pv-1_20260101T000000Z', podName: 'db', volumeName: 'data' },
      },
    ]);
    expect(result.notes.filter((n) => n.level === 'warning')).toEqual([]);
    expect(result.notes).toContainEqual({
      level: 'info',
      message:
        'Its files are restored from the repository (manifest nightly_pv.pv-1_20260101T000000Z) once the PVC is bound',
      namespace: 'shop-2',
      name: 'data',
    });
  });

  it('says so when its file backup failed or its PVC exists', () => {
    expect(
      plan({ infos: [files('Failed')], pvs: [], pvcs: [pvcObject('data', 'pv-1')] }).notes,
    ).toContainEqual(
      expect.objectContaining({
        level: 'warning',
        message: 'its file backup did not complete (phase Failed): the volume is re-provisioned empty',
      }),
    );
    const existing = plan({
      infos: [files()],
      pvs: [],
      pvcs: [pvcObject('data', 'pv-1')],
      existingPvcs: new Set(['shop/data']),
    });
    expect(existing.provisioned).toEqual([]);
    expect(existing.notes).toContainEqual(
      expect.objectContaining({
        level: 'warning',
        message:
          'the PVC exists already: the files of manifest nightly_pv.pv-1_20260101T000000Z are not restored into it',
      }),
    );
  });
});
