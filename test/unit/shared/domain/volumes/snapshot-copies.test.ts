import { describe, expect, it } from 'vitest';
import type { BackupVolumeInfo } from '../../../../../shared/domain/volumes/info-shapes.js';
import { persistentVolumeAction } from '../../../../../shared/domain/volumes/pv-action.js';
import { planVolumeRestore } from '../../../../../shared/domain/volumes/restore.js';
import { VOLUME_SNAPSHOT_CONTENTS } from '../../../../../shared/domain/volumes/restore-claims.js';
import {
  ebsSnapshotOfCsi,
  newSnapshotCopy,
  type SnapshotCopyInfo,
  snapshotCopyFor,
} from '../../../../../shared/domain/volumes/snapshot-copies.js';

type Obj = Record<string, unknown>;

const DR = '210987654321';
const drHome = { account: DR, region: 'us-west-2' };

const copy = (extra: Partial<SnapshotCopyInfo> = {}): SnapshotCopyInfo => ({
  account: DR,
  region: 'us-west-2',
  snapshotHandle: 'snap-copy',
  sourceSnapshotHandle: 'snap-1',
  Phase: 'Completed',
  ...extra,
});

const native = (snapshotCopies?: SnapshotCopyInfo[]): BackupVolumeInfo => ({
  pvcName: 'data',
  pvcNamespace: 'shop',
  pvName: 'pv-1',
  backupMethod: 'NativeSnapshot',
  snapshotDataMoved: false,
  preserveLocalSnapshot: false,
  skipped: false,
  nativeSnapshotInfo: {
    snapshotHandle: 'snap-1',
    volumeType: 'gp3',
    volumeAZ: 'us-east-1a',
    iops: '0',
    Phase: 'Completed',
  },
  pvInfo: { reclaimPolicy: 'Delete', labels: null },
  ...(snapshotCopies ? { snapshotCopies } : {}),
});

const csi = (snapshotCopies?: SnapshotCopyInfo[]): BackupVolumeInfo => ({
  ...native(snapshotCopies),
  backupMethod: 'CSISnapshot',
  nativeSnapshotInfo: undefined,
  csiSnapshotInfo: {
    snapshotHandle: 'snap-1',
    size: 2 ** 30,
    driver: 'ebs.csi.aws.com',
    vscName: 'snapcontent-1',
    ReadyToUse: true,
  },
});

describe('the snapshot copy a restore picks for where its volumes land', () => {
  it.each<[string, BackupVolumeInfo, { snapshotHandle: string } | { reason: string }]>([
    ['a completed copy there is picked', native([copy()]), { snapshotHandle: 'snap-copy' }],
    [
      'a completed copy wins over a failed one there',
      native([copy({ Phase: 'Failed', snapshotHandle: '', error: 'x' }), copy()]),
      { snapshotHandle: 'snap-copy' },
    ],
    [
      'no copy at all: says where the snapshot is and that copySnapshots made none',
      native(),
      {
        reason:
          "its native snapshot snap-1 stays in the backup's account and region, and the backup has no copy in account 210987654321 region us-west-2 (copySnapshots)",
      },
    ],
    [
      'copies elsewhere only: names them',
      csi([copy({ region: 'eu-west-1' })]),
      {
        reason:
          "its CSI snapshot snap-1 stays in the backup's account and region, and the backup has no copy in account 210987654321 region us-west-2 (copySnapshots; copies exist in account 210987654321 region eu-west-1)",
      },
    ],
    [
      'a failed copy there: its error',
      native([copy({ Phase: 'Failed', snapshotHandle: '', error: 'UnauthorizedOperation: no grant' })]),
      {
        reason:
          'its native snapshot snap-1 was not copied to account 210987654321 region us-west-2: UnauthorizedOperation: no grant',
      },
    ],
    [
      'an unfinished copy there: its phase',
      native([copy({ Phase: 'InProgress', snapshotHandle: 'snap-copy' })]),
      {
        reason:
          "its native snapshot snap-1's copy to account 210987654321 region us-west-2 did not complete (phase InProgress)",
      },
    ],
    [
      "a copy in the backup's own account does not serve another account",
      native([copy({ account: undefined })]),
      {
        reason:
          "its native snapshot snap-1 stays in the backup's account and region, and the backup has no copy in account 210987654321 region us-west-2 (copySnapshots; copies exist in the backup's account region us-west-2)",
      },
    ],
  ])('%s', (_, info, expected) => {
    expect(snapshotCopyFor(info, drHome)).toEqual(expected);
  });

  it("matches a copy in the backup's own account to a restore that names only another region", () => {
    expect(snapshotCopyFor(native([copy({ account: undefined })]), { region: 'us-west-2' })).toEqual({
      snapshotHandle: 'snap-copy',
    });
  });

  it("serves a DR deployment in the backup's own account from a copy that names no account", () => {
    // A same-account DR deployment names its account in its home; the copy only its region.
    const own = copy({ account: undefined, backupAccount: DR });
    expect(snapshotCopyFor(native([own]), drHome)).toEqual({ snapshotHandle: 'snap-copy' });
    expect(snapshotCopyFor(native([own]), { region: 'us-west-2' })).toEqual({ snapshotHandle: 'snap-copy' });
  });

  it("keeps a copy in the backup's own account from a deployment in another account", () => {
    const own = copy({ account: undefined, backupAccount: '123456789012' });
    expect(snapshotCopyFor(native([own]), drHome)).toMatchObject({
      reason: expect.stringContaining('has no copy in account 210987654321 region us-west-2'),
    });
  });

  it('starts a copy with its target, and knows the EBS snapshot behind an EBS CSI snapshot only', () => {
    expect(
      newSnapshotCopy({
        target: { account: DR, region: 'us-west-2', kmsKeyId: 'k' },
        sourceSnapshotHandle: 'snap-1',
      }),
    ).toEqual({
      account: DR,
      region: 'us-west-2',
      kmsKeyId: 'k',
      snapshotHandle: '',
      sourceSnapshotHandle: 'snap-1',
      Phase: 'New',
    });
    expect(ebsSnapshotOfCsi({ driver: 'ebs.csi.aws.com', snapshotHandle: 'snap-1' })).toBe('snap-1');
    expect(ebsSnapshotOfCsi({ driver: 'pd.csi.storage.gke.io', snapshotHandle: 'snap-1' })).toBeUndefined();
  });
});

describe('a restore whose volumes land in another account or region', () => {
  const pv = { name: 'pv-1', claimNamespace: 'shop', reclaimPolicy: 'Delete', ebs: true };

  it('re-creates a native volume from its copy there, in the zone the request names', () => {
    expect(
      persistentVolumeAction({
        pv,
        info: native([copy()]),
        exists: false,
        availabilityZone: 'us-west-2a',
        elsewhere: true,
        home: drHome,
        cloneName: () => 'x',
      }),
    ).toEqual({
      action: 'from-snapshot',
      source: {
        snapshotHandle: 'snap-copy',
        volumeType: 'gp3',
        availabilityZone: 'us-west-2a',
        recordedAvailabilityZone: 'us-east-1a',
      },
    });
  });

  const pvObject: Obj = {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: 'pv-1' },
    spec: {
      csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-1' },
      persistentVolumeReclaimPolicy: 'Delete',
      claimRef: { namespace: 'shop', name: 'data' },
    },
  };
  const pvcObject: Obj = {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data', namespace: 'shop' },
    spec: { volumeName: 'pv-1', resources: { requests: { storage: '1Gi' } } },
  };
  const plan = (info: BackupVolumeInfo) =>
    planVolumeRestore({
      infos: [info],
      pvs: [pvObject],
      pvcs: [pvcObject],
      elsewhere: true,
      home: drHome,
      existingPvs: new Set(),
      existingPvcs: new Set(),
      names: { clone: (name) => `clone-${name}`, snapshot: (c) => `vs-${c.name}` },
    });

  it('pre-provisions a CSI snapshot from its copy there', () => {
    const result = plan(csi([copy()]));
    const content = result.snapshots.find((s) => s.groupResource === VOLUME_SNAPSHOT_CONTENTS);
    expect(((content?.object.spec ?? {}) as Obj).source).toEqual({ snapshotHandle: 'snap-copy' });
    expect(result.pvcs).toHaveLength(1);
    expect(result.notes.filter((n) => n.level === 'error')).toEqual([]);
  });

  it('leaves out a CSI volume without a copy there, with an error naming it and why', () => {
    const result = plan(csi());
    expect(result.pvcs).toEqual([]);
    expect(result.snapshots).toEqual([]);
    expect(result.notes.filter((n) => n.level === 'error')).toEqual([
      {
        level: 'error',
        namespace: 'shop',
        name: 'data',
        message:
          "PersistentVolumeClaim data is not restored: its CSI snapshot snap-1 stays in the backup's account and region, and the backup has no copy in account 210987654321 region us-west-2 (copySnapshots)",
      },
    ]);
  });
});
