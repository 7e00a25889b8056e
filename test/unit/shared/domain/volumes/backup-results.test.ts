import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type BlockVolumeFacts,
  backupVolumeResults,
  type HandledVolumeFacts,
} from '../../../../../shared/domain/volumes/backup-results.js';
import type { DataMovementFacts } from '../../../../../shared/domain/volumes/data-movement.js';
import {
  CSI_SNAPSHOT_ACTION,
  EBS_SNAPSHOT_ACTION,
  type OperationStatus,
  type VolumeOperationSpec,
} from '../../../../../shared/domain/volumes/operations.js';
import type { VolumeDecision } from '../../../../../shared/domain/volumes/policy.js';

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

  describe('of a snapshotMoveData volume', () => {
    const moved: HandledVolumeFacts = {
      pvName: 'pv-data',
      pvcNamespace: 'app',
      pvcName: 'data',
      decision: {
        action: 'snapshot',
        method: 'native',
        ebsVolumeId: 'vol-1',
        moveData: true,
        reason: 'snapshotVolumes is not set to false',
      },
      native: { volumeId: 'vol-1', volumeType: 'gp3', availabilityZone: 'us-east-1a', snapshotId: 'snap-1' },
      startedAt: '2026-01-01T00:00:00.000Z',
      operation: nativeOperation('snap-1', 'pv-data'),
    };
    const movement = (facts: Partial<DataMovementFacts>): DataMovementFacts => ({
      jobId: 'nightly_vol-1_20260101T000000Z',
      mode: 'block',
      state: 'Completed',
      created: '2026-01-01T00:01:00.000Z',
      started: '2026-01-01T00:01:10.000Z',
      updated: '2026-01-01T00:03:00.000Z',
      manifestId: 'nightly_vol-1_20260101T000000Z',
      size: 8 * 1024 ** 3,
      bytesDone: 300 * 512 * 1024,
      retainedSnapshot: 'snap-1',
      ...facts,
    });
    const withMovement = (m: DataMovementFacts | undefined, status: OperationStatus = completed) =>
      backupVolumeResults({
        backupName: 'nightly',
        backupUID: 'run-1',
        location: 'default',
        blocks: [block([moved])],
        statuses: new Map([['snap-1', status]]),
        movements: new Map(m ? [['snapshot:snap-1', m]] : []),
      });

    it('records the moved data, the snapshot, and the movement as an item operation counted with the snapshot', () => {
      const out = withMovement(movement({}));
      expect(out.volumeInfos[0]).toMatchObject({
        backupMethod: 'NativeSnapshot',
        snapshotDataMoved: true,
        result: 'succeeded',
        startTimestamp: '2026-01-01T00:00:00Z',
        completionTimestamp: '2026-01-01T00:03:00Z',
        snapshotDataMovementInfo: {
          snapshotHandle: 'nightly_vol-1_20260101T000000Z',
          retainedSnapshot: 'snap-1',
          size: 8589934592,
          Phase: 'Completed',
        },
        nativeSnapshotInfo: { snapshotHandle: 'snap-1', Phase: 'Completed' },
      });
      expect(out.operations[1]).toEqual({
        spec: {
          backupName: 'nightly',
          backupUID: 'run-1',
          backupItemAction: 'lifeboat.io/data-mover',
          ResourceIdentifier: {
            Group: '',
            Resource: 'persistentvolumeclaims',
            Namespace: 'app',
            Name: 'data',
          },
          OperationID: 'nightly_vol-1_20260101T000000Z',
          PostOperationItems: null,
        },
        status: {
          phase: 'Completed',
          nCompleted: 300 * 512 * 1024,
          nTotal: 8589934592,
          operationUnits: 'Bytes',
          description: 'Completed',
          created: '2026-01-01T00:01:00Z',
          started: '2026-01-01T00:01:10Z',
          updated: '2026-01-01T00:03:00Z',
        },
      });
      expect(out.counters).toMatchObject({
        volumeSnapshotsAttempted: 1,
        volumeSnapshotsCompleted: 1,
        backupItemOperationsAttempted: 2,
        backupItemOperationsCompleted: 2,
        backupItemOperationsFailed: 0,
      });
      expect(out.failures).toEqual([]);
    });

    it('fails the volume (not the backup) when its movement failed, naming why', () => {
      const out = withMovement(movement({ state: 'Failed', error: 'ValidationException: bad block' }));
      expect(out.volumeInfos[0]).toMatchObject({
        result: 'failed',
        snapshotDataMovementInfo: { snapshotHandle: '', Phase: 'Failed' },
      });
      expect(out.failures).toEqual([
        {
          scope: { namespace: 'app' },
          message: 'data movement of PVC app/data (PV pv-data) failed: ValidationException: bad block',
        },
      ]);
      expect(out.counters.backupItemOperationsFailed).toBe(1);
    });

    it('fails a movement that never ran, and only once when its snapshot failed', () => {
      expect(withMovement(undefined).failures).toEqual([
        {
          scope: { namespace: 'app' },
          message: 'data movement of PVC app/data (PV pv-data) failed: the data mover never ran for it',
        },
      ]);
      const snapshotFailed = withMovement(
        movement({ state: 'Failed', error: 'its data cannot be moved: its snapshot did not complete' }),
        { phase: 'Failed', error: 'EBS snapshot snap-1 failed' },
      );
      expect(snapshotFailed.failures.map((f) => f.message)).toEqual([
        'native snapshot of PVC app/data (PV pv-data) failed: EBS snapshot snap-1 failed',
      ]);
    });
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
