import { describe, expect, it } from 'vitest';
import { validateRestoreRequest } from '../../../../shared/contracts/restore-request.js';
import { backupVolumeInfos } from '../../../../shared/contracts/restore-volumes.js';

const request = (spec: Record<string, unknown>) => ({
  cluster: 'dr',
  restore: { metadata: { name: 'restore-1' }, spec: { backupName: 'nightly', ...spec } },
});

describe('volumeAvailabilityZone (Lifeboat) in a restore request', () => {
  it.each(['us-east-1a', 'eu-central-2c', 'us-west-2-lax-1a', 'ap-southeast-4b'])('accepts %s', (zone) => {
    expect(validateRestoreRequest(request({ volumeAvailabilityZone: zone })).ok).toBe(true);
  });

  it.each(['us-east-1', 'US-EAST-1A', 'use1-az1', '', 'us-east-1a; rm -rf'])(
    'refuses %j by its field path',
    (zone) => {
      const result = validateRestoreRequest(request({ volumeAvailabilityZone: zone }));
      expect(result.ok).toBe(false);
      expect(result.ok ? [] : result.problems).toEqual([
        {
          path: 'restore.spec.volumeAvailabilityZone',
          message: 'must be an availability zone name, such as us-east-1a',
        },
      ]);
    },
  );
});

describe("a backup's volumes-info as a restore reads it", () => {
  it('reads what Velero writes, keys and all', () => {
    const velero = [
      {
        pvcName: 'db',
        pvcNamespace: 'shop',
        pvName: 'pvc-1',
        backupMethod: 'CSISnapshot',
        snapshotDataMoved: false,
        preserveLocalSnapshot: false,
        skipped: false,
        startTimestamp: '2026-01-01T00:00:00Z',
        result: 'succeeded',
        csiSnapshotInfo: {
          snapshotHandle: 'snap-1',
          size: 1073741824,
          driver: 'ebs.csi.aws.com',
          vscName: 'snapcontent-1',
          operationID: '',
          ReadyToUse: true,
        },
        pvInfo: { reclaimPolicy: 'Delete', labels: { a: 'b' } },
      },
      {
        pvName: 'pv-2',
        backupMethod: 'NativeSnapshot',
        snapshotDataMoved: false,
        preserveLocalSnapshot: false,
        skipped: false,
        nativeSnapshotInfo: {
          snapshotHandle: 'snap-2',
          volumeType: 'gp3',
          volumeAZ: 'us-east-1a',
          iops: '',
          Phase: 'Completed',
        },
      },
    ];
    expect(backupVolumeInfos.parse(velero)).toEqual([
      {
        pvcName: 'db',
        pvcNamespace: 'shop',
        pvName: 'pvc-1',
        backupMethod: 'CSISnapshot',
        snapshotDataMoved: false,
        preserveLocalSnapshot: false,
        skipped: false,
        csiSnapshotInfo: {
          snapshotHandle: 'snap-1',
          size: 1073741824,
          driver: 'ebs.csi.aws.com',
          vscName: 'snapcontent-1',
          operationID: '',
          ReadyToUse: true,
        },
        pvInfo: { reclaimPolicy: 'Delete', labels: { a: 'b' } },
      },
      {
        pvName: 'pv-2',
        backupMethod: 'NativeSnapshot',
        snapshotDataMoved: false,
        preserveLocalSnapshot: false,
        skipped: false,
        nativeSnapshotInfo: {
          snapshotHandle: 'snap-2',
          volumeType: 'gp3',
          volumeAZ: 'us-east-1a',
          iops: '',
          Phase: 'Completed',
        },
      },
    ]);
  });

  it('reads a field of the wrong type as its zero value and an unknown method as none, as Go would', () => {
    const [info] = backupVolumeInfos.parse([
      { pvName: 'pv', backupMethod: 'SomethingNew', skipped: 'yes', nativeSnapshotInfo: { iops: 3000 } },
    ]);
    expect(info).toEqual({
      pvName: 'pv',
      snapshotDataMoved: false,
      preserveLocalSnapshot: false,
      skipped: false,
      nativeSnapshotInfo: { snapshotHandle: '', volumeType: '', volumeAZ: '', iops: '3000', Phase: '' },
    });
  });
});
