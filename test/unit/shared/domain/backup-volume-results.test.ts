import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type BlockVolumeFacts,
  backupVolumeResults,
  type HandledVolumeFacts,
} from '../../../../shared/domain/backup-volume-results.js';
import { DATA_MOVER_UNAVAILABLE } from '../../../../shared/domain/volume-info.js';
import {
  CSI_SNAPSHOT_ACTION,
  EBS_SNAPSHOT_ACTION,
  type OperationStatus,
  type VolumeOperationSpec,
} from '../../../../shared/domain/volume-operations.js';
import type { VolumeDecision } from '../../../../shared/domain/volume-policy.js';

const snapshotDecision = (method: 'native' | 'csi'): VolumeDecision => ({
  action: 'snapshot',
  method,
  ebsVolumeId: 'vol-1',
  moveData: false,
  reason: 'snapshotVolumes is not set to false',
});
const nativeOperation = (id: string, pv: string): VolumeOperationSpec => ({
  operationId: id,
  method: 'native',
  backupItemAction: EBS_SNAPSHOT_ACTION,
  resource: { Group: '', Resource: 'persistentvolumes', Namespace: '', Name: pv },
  postOperationItems: [],
  createdAt: '2026-01-01T00:00:00.000Z',
});
const completed: OperationStatus = { phase: 'Completed', updated: '2026-01-01T00:01:00Z' };

function block(handled: HandledVolumeFacts[], extra: Partial<BlockVolumeFacts> = {}): BlockVolumeFacts {
  return {
    claims: [{ namespace: 'app', name: 'data', volumeName: 'pv-data' }],
    persistentVolumes: [
      { name: 'pv-data', claim: { namespace: 'app', name: 'data' }, reclaimPolicy: 'Delete' },
    ],
    handled,
    ...extra,
  };
}

const results = (blocks: BlockVolumeFacts[], statuses: [string, OperationStatus][] = []) =>
  backupVolumeResults({
    backupName: 'nightly',
    backupUID: 'run-1',
    location: 'default',
    blocks,
    statuses: new Map(statuses),
  });

describe('the volume results of a backup', () => {
  it('turn a completed native snapshot into a volumes-info entry, a Completed volume.Snapshot and an operation', () => {
    const out = results(
      [
        block([
          {
            pvName: 'pv-data',
            pvcNamespace: 'app',
            pvcName: 'data',
            decision: snapshotDecision('native'),
            native: {
              volumeId: 'vol-1',
              volumeType: 'io2',
              iops: 3000,
              availabilityZone: 'us-east-1a',
              snapshotId: 'snap-1',
            },
            startedAt: '2026-01-01T00:00:00.000Z',
            operation: nativeOperation('snap-1', 'pv-data'),
          },
        ]),
      ],
      [['snap-1', completed]],
    );
    expect(out.volumeInfos).toEqual([
      {
        pvcName: 'data',
        pvcNamespace: 'app',
        pvName: 'pv-data',
        backupMethod: 'NativeSnapshot',
        snapshotDataMoved: false,
        preserveLocalSnapshot: false,
        skipped: false,
        startTimestamp: '2026-01-01T00:00:00Z',
        completionTimestamp: '2026-01-01T00:01:00Z',
        result: 'succeeded',
        nativeSnapshotInfo: {
          snapshotHandle: 'snap-1',
          volumeType: 'io2',
          volumeAZ: 'us-east-1a',
          iops: '3000',
          Phase: 'Completed',
        },
        pvInfo: { reclaimPolicy: 'Delete', labels: null },
      },
    ]);
    expect(out.nativeSnapshots).toEqual([
      {
        spec: {
          backupName: 'nightly',
          backupUID: 'run-1',
          location: 'default',
          persistentVolumeName: 'pv-data',
          providerVolumeID: 'vol-1',
          volumeType: 'io2',
          volumeAZ: 'us-east-1a',
          volumeIOPS: 3000,
        },
        status: { providerSnapshotID: 'snap-1', phase: 'Completed' },
      },
    ]);
    expect(out.operations).toHaveLength(1);
    expect(out.counters).toEqual({
      volumeSnapshotsAttempted: 1,
      volumeSnapshotsCompleted: 1,
      csiVolumeSnapshotsAttempted: 0,
      csiVolumeSnapshotsCompleted: 0,
      backupItemOperationsAttempted: 1,
      backupItemOperationsCompleted: 1,
      backupItemOperationsFailed: 0,
    });
    expect(out.failures).toEqual([]);
  });

  it('fail a volume whose snapshot failed or never started, in its namespace, with the reason', () => {
    const out = results(
      [
        block([
          {
            pvName: 'pv-data',
            pvcNamespace: 'app',
            pvcName: 'data',
            decision: snapshotDecision('native'),
            native: {
              volumeId: 'vol-1',
              volumeType: 'gp3',
              availabilityZone: 'us-east-1a',
              snapshotId: 'snap-1',
            },
            operation: nativeOperation('snap-1', 'pv-data'),
          },
        ]),
        block(
          [
            {
              pvName: 'pv-other',
              decision: snapshotDecision('native'),
              native: { volumeId: 'vol-2', volumeType: '', availabilityZone: '' },
              error: 'DescribeVolumes vol-2: InvalidVolume.NotFound',
            },
          ],
          { claims: [], persistentVolumes: [{ name: 'pv-other' }] },
        ),
      ],
      [['snap-1', { phase: 'Failed', error: 'Asynchronous action timed out' }]],
    );
    expect(out.volumeInfos.map((v) => [v.pvName, v.result, v.nativeSnapshotInfo?.Phase])).toEqual([
      ['pv-data', 'failed', 'Failed'],
      ['pv-other', 'failed', 'Failed'],
    ]);
    expect(out.failures).toEqual([
      { scope: { namespace: 'app' }, message: expect.stringContaining('Asynchronous action timed out') },
      { scope: 'cluster', message: expect.stringContaining('InvalidVolume.NotFound') },
    ]);
    expect(out.counters.volumeSnapshotsAttempted).toBe(2);
    expect(out.counters.volumeSnapshotsCompleted).toBe(0);
    expect(out.counters.backupItemOperationsFailed).toBe(1);
  });

  it('record a CSI snapshot with its content, handle, size and driver', () => {
    const operation: VolumeOperationSpec = {
      operationId: 'app/velero-data-x/2026-01-01T00:00:00Z',
      method: 'csi',
      backupItemAction: CSI_SNAPSHOT_ACTION,
      resource: {
        Group: 'snapshot.storage.k8s.io',
        Resource: 'volumesnapshots',
        Namespace: 'app',
        Name: 'velero-data-x',
      },
      postOperationItems: [],
      createdAt: '2026-01-01T00:00:00.000Z',
    };
    const out = results(
      [
        block([
          {
            pvName: 'pv-data',
            pvcNamespace: 'app',
            pvcName: 'data',
            decision: snapshotDecision('csi'),
            csi: {
              volumeSnapshotNamespace: 'app',
              volumeSnapshotName: 'velero-data-x',
              driver: 'ebs.csi.aws.com',
            },
            startedAt: '2026-01-01T00:00:00Z',
            operation,
          },
        ]),
      ],
      [
        [
          operation.operationId,
          {
            phase: 'Completed',
            updated: '2026-01-01T00:00:20Z',
            csi: {
              vscName: 'snapcontent-1',
              snapshotHandle: 'snap-7',
              size: 8589934592,
              driver: 'ebs.csi.aws.com',
              readyToUse: true,
            },
          },
        ],
      ],
    );
    expect(out.volumeInfos[0]).toMatchObject({
      backupMethod: 'CSISnapshot',
      preserveLocalSnapshot: true,
      skipped: false,
      result: 'succeeded',
      csiSnapshotInfo: {
        snapshotHandle: 'snap-7',
        size: 8589934592,
        driver: 'ebs.csi.aws.com',
        vscName: 'snapcontent-1',
        operationID: operation.operationId,
        ReadyToUse: true,
      },
    });
    expect(out.counters).toMatchObject({ csiVolumeSnapshotsAttempted: 1, csiVolumeSnapshotsCompleted: 1 });
    expect(out.nativeSnapshots).toEqual([]);
  });

  it('say why a volume for the data mover was skipped', () => {
    const out = results([
      block([
        {
          pvName: 'pv-data',
          pvcNamespace: 'app',
          pvcName: 'data',
          decision: { action: 'snapshot', method: 'csi', moveData: true, reason: 'snapshotMoveData is set' },
        },
      ]),
    ]);
    expect(out.volumeInfos[0]).toMatchObject({
      skipped: true,
      skippedReason: expect.stringContaining(DATA_MOVER_UNAVAILABLE),
    });
    expect(out.failures).toEqual([]);
  });

  it('give every PVC and PV of the backup exactly one entry, whatever was recorded', () => {
    const name = fc.constantFrom('a', 'b', 'c', 'd');
    const handledOf = fc.record({
      pv: fc.option(name, { nil: undefined }),
      pvc: fc.option(name, { nil: undefined }),
    });
    fc.assert(
      fc.property(
        fc.array(fc.record({ pvc: name, pv: fc.option(name, { nil: undefined }) }), { maxLength: 5 }),
        fc.array(name, { maxLength: 5 }),
        fc.array(handledOf, { maxLength: 6 }),
        (claims, pvs, handled) => {
          const blocks: BlockVolumeFacts[] = [
            {
              claims: claims.map((c) => ({
                namespace: 'ns',
                name: c.pvc,
                ...(c.pv ? { volumeName: `pv-${c.pv}` } : {}),
              })),
              persistentVolumes: [...new Set(pvs)].map((p) => ({ name: `pv-${p}` })),
              handled: handled.map((h) => ({
                ...(h.pv ? { pvName: `pv-${h.pv}` } : {}),
                ...(h.pvc ? { pvcNamespace: 'ns', pvcName: h.pvc } : {}),
                decision: { action: 'skip', approach: 'any', reason: 'test' },
              })),
            },
          ];
          const out = results(blocks);
          const pvcNames = new Set(claims.map((c) => c.pvc));
          const pvNames = new Set(pvs.map((p) => `pv-${p}`));
          for (const pvc of pvcNames)
            expect(out.volumeInfos.filter((v) => v.pvcName === pvc && v.pvcNamespace === 'ns')).toHaveLength(
              1,
            );
          for (const pv of pvNames) expect(out.volumeInfos.filter((v) => v.pvName === pv)).toHaveLength(1);
          for (const v of out.volumeInfos) expect(v.skipped || v.result !== undefined).toBe(true);
        },
      ),
    );
  });
});
