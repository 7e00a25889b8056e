import { describe, expect, it } from 'vitest';
import { backupCreateFlags } from '../../../cli/backup/flags.js';
import { backupRequest } from '../../../cli/backup/request.js';
import { parseFlags } from '../../../cli/flags.js';
import { renderBackupDescribe } from '../../../cli/render/backups.js';
import { backupDocument } from '../../../shared/domain/storage/backup-document.js';
import type { BackupVolumeInfo } from '../../../shared/domain/volumes/info.js';
import type { BackupOperation } from '../../../shared/domain/volumes/operations.js';

const document = backupDocument({
  name: 'nightly',
  spec: { includedNamespaces: ['app'] },
  startedAt: new Date('2026-01-01T00:00:00Z'),
  completedAt: new Date('2026-01-01T00:05:00Z'),
  expiration: new Date('2026-01-31T00:00:00Z'),
  phase: 'Completed',
  totalItems: 3,
  itemsBackedUp: 3,
  volumeCounters: {
    volumeSnapshotsAttempted: 1,
    volumeSnapshotsCompleted: 1,
    csiVolumeSnapshotsAttempted: 1,
    csiVolumeSnapshotsCompleted: 1,
    backupItemOperationsAttempted: 2,
    backupItemOperationsCompleted: 2,
    backupItemOperationsFailed: 0,
  },
});
const volumeInfos: BackupVolumeInfo[] = [
  {
    pvcName: 'data',
    pvcNamespace: 'app',
    pvName: 'pv-data',
    backupMethod: 'NativeSnapshot',
    snapshotDataMoved: false,
    preserveLocalSnapshot: false,
    skipped: false,
    result: 'succeeded',
    nativeSnapshotInfo: {
      snapshotHandle: 'snap-1',
      volumeType: 'io2',
      volumeAZ: 'us-east-1a',
      iops: '3000',
      Phase: 'Completed',
    },
  },
  {
    pvcName: 'logs',
    pvcNamespace: 'app',
    pvName: 'pv-logs',
    backupMethod: 'CSISnapshot',
    snapshotDataMoved: false,
    preserveLocalSnapshot: true,
    skipped: false,
    result: 'succeeded',
    csiSnapshotInfo: {
      snapshotHandle: 'snap-2',
      size: 1073741824,
      driver: 'ebs.csi.aws.com',
      vscName: 'snapcontent-2',
      operationID: 'app/velero-logs-1/2026-01-01T00:00:01Z',
      ReadyToUse: true,
    },
  },
  {
    pvcName: 'cache',
    pvcNamespace: 'app',
    snapshotDataMoved: false,
    preserveLocalSnapshot: false,
    skipped: true,
    skippedReason: 'any: the PVC is not bound to a PV;',
  },
];
const itemOperations: BackupOperation[] = [
  {
    spec: {
      backupName: 'nightly',
      backupUID: 'run',
      backupItemAction: 'lifeboat.io/ebs-volume-snapshotter',
      ResourceIdentifier: { Group: '', Resource: 'persistentvolumes', Namespace: '', Name: 'pv-data' },
      OperationID: 'snap-1',
      PostOperationItems: null,
    },
    status: {
      phase: 'Completed',
      nCompleted: 100,
      nTotal: 100,
      operationUnits: '%',
      description: 'completed',
    },
  },
];

describe('lifeboat backup describe, volume sections', () => {
  it("summarizes operations and volumes without --details, as Velero's describe does", () => {
    const text = renderBackupDescribe({ document, volumeInfos, itemOperations, details: false });
    expect(text).toContain(
      'Backup Item Operations:  2 of 2 completed successfully, 0 failed (specify --details for more information)',
    );
    expect(text).toContain(
      [
        'Backup Volumes:',
        '  Velero-Native Snapshots:',
        '    pv-data: specify --details for more information',
        '',
        '  CSI Snapshots:',
        '    app/logs:',
        '      Snapshot: included, specify --details for more information',
        '',
        '  Pod Volume Backups: <none included>',
      ].join('\n'),
    );
    expect(text).not.toContain('Skipped:');
  });

  it('lists each operation, snapshot and skipped volume with --details', () => {
    const text = renderBackupDescribe({ document, volumeInfos, itemOperations, details: true });
    expect(text).toContain('  Operation for persistentvolumes /pv-data:');
    expect(text).toContain('    Backup Item Action Plugin:  lifeboat.io/ebs-volume-snapshotter');
    expect(text).toContain(
      '    Operation ID:               snap-1\n    Phase:                      Completed',
    );
    expect(text).toContain('    Progress:                   100 of 100 complete (%)');
    expect(text).toContain(
      [
        '    pv-data:',
        '      Snapshot ID:        snap-1',
        '      Type:               io2',
        '      Availability Zone:  us-east-1a',
        '      IOPS:               3000',
      ].join('\n'),
    );
    expect(text).toContain('        Snapshot Content Name: snapcontent-2');
    expect(text).toContain('        Storage Snapshot ID: snap-2');
    expect(text).toContain('        Snapshot Size (bytes): 1073741824');
    expect(text).toContain('        CSI Driver: ebs.csi.aws.com');
    expect(text).toContain('  Skipped:\n    app/cache: any: the PVC is not bound to a PV;');
  });

  it('says no volumes are included when snapshotVolumes is false', () => {
    const off = { ...document, spec: { snapshotVolumes: false } };
    expect(renderBackupDescribe({ document: off, details: true })).toContain(
      'Backup Volumes: <none included>',
    );
  });
});

/** `backup create NAME` with these flags, as a request. */
const backupRequestFromFlags = (name: string, args: string[]) => ({
  request: backupRequest({
    name,
    values: parseFlags({ command: 'backup create', flags: backupCreateFlags, args }).values,
  }),
});

describe('lifeboat backup create volume flags', () => {
  it("turns Velero's flags into the request's volume fields", () => {
    const { request } = backupRequestFromFlags('nightly', [
      '--snapshot-volumes=false',
      '--snapshot-move-data=true',
      '--default-volumes-to-fs-backup=true',
      '--csi-snapshot-timeout=20m',
      '--item-operation-timeout=2h',
      '--resource-policies-configmap=ops/volume-policy',
    ]);
    expect((request as { backup: { spec: unknown } }).backup.spec).toEqual({
      snapshotVolumes: false,
      snapshotMoveData: true,
      defaultVolumesToFsBackup: true,
      csiSnapshotTimeout: '20m',
      itemOperationTimeout: '2h',
      resourcePolicy: { kind: 'configmap', namespace: 'ops', name: 'volume-policy' },
    });
  });

  it('refuses a malformed ConfigMap reference by its flag', () => {
    expect(() => backupRequestFromFlags('nightly', ['--resource-policies-configmap=a/b/c'])).toThrow(
      /--resource-policies-configmap/,
    );
  });
});
