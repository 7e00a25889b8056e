import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  assembleBackupVolumeInfos,
  type BackupVolume,
  backupVolumeInfoOf,
  backupVolumesOf,
  type ClaimFacts,
  claimFactsOf,
  type HandledVolume,
  kubeTime,
  nativeVolumeSnapshotOf,
  type PersistentVolumeFacts,
  persistentVolumeFactsOf,
  restoredFromNativeSnapshot,
} from '../../../../../shared/domain/volumes/info.js';
import type { VolumeDecision } from '../../../../../shared/domain/volumes/policy.js';

const volume: BackupVolume = {
  pvcNamespace: 'app',
  pvcName: 'data',
  pvName: 'pv-data',
  pvInfo: { reclaimPolicy: 'Delete', labels: null },
};
const nativeDecision: VolumeDecision = {
  action: 'snapshot',
  method: 'native',
  ebsVolumeId: 'vol-1',
  moveData: false,
  reason: 'snapshotVolumes is not set to false',
};
const snapshot = (phase: 'Completed' | 'Failed') =>
  nativeVolumeSnapshotOf({
    backupName: 'nightly',
    backupUID: 'uid-1',
    location: 'default',
    pvName: 'pv-data',
    volumeId: 'vol-1',
    volumeType: 'io2',
    volumeAZ: 'us-east-1a',
    iops: 4000,
    ...(phase === 'Completed' ? { snapshotId: 'snap-1' } : {}),
    phase,
  });

describe('native volume snapshots', () => {
  it("are Velero's volume.Snapshot records, keys in Go's order", () => {
    expect(JSON.stringify(snapshot('Completed'))).toBe(
      JSON.stringify({
        spec: {
          backupName: 'nightly',
          backupUID: 'uid-1',
          location: 'default',
          persistentVolumeName: 'pv-data',
          providerVolumeID: 'vol-1',
          volumeType: 'io2',
          volumeAZ: 'us-east-1a',
          volumeIOPS: 4000,
        },
        status: { providerSnapshotID: 'snap-1', phase: 'Completed' },
      }),
    );
  });

  it('leave out an unknown zone, IOPS and snapshot id, as omitempty does', () => {
    const record = nativeVolumeSnapshotOf({
      backupName: 'b',
      backupUID: 'u',
      location: 'l',
      pvName: 'p',
      volumeId: 'vol-1',
      volumeType: 'gp3',
      volumeAZ: '',
      phase: 'Failed',
    });
    expect(record).toEqual({
      spec: {
        backupName: 'b',
        backupUID: 'u',
        location: 'l',
        persistentVolumeName: 'p',
        providerVolumeID: 'vol-1',
        volumeType: 'gp3',
      },
      status: { phase: 'Failed' },
    });
  });
});

describe('volumes-info entries', () => {
  it('record a completed native snapshot with Go-named Phase and string IOPS', () => {
    const entry = backupVolumeInfoOf({
      volume,
      decision: nativeDecision,
      outcome: {
        snapshot: snapshot('Completed'),
        startedAt: '2026-01-02T03:04:05.678Z',
        completedAt: new Date(Date.UTC(2026, 0, 2, 3, 9)),
      },
    });
    expect(JSON.stringify(entry)).toBe(
      JSON.stringify({
        pvcName: 'data',
        pvcNamespace: 'app',
        pvName: 'pv-data',
        backupMethod: 'NativeSnapshot',
        snapshotDataMoved: false,
        preserveLocalSnapshot: false,
        skipped: false,
        startTimestamp: '2026-01-02T03:04:05Z',
        completionTimestamp: '2026-01-02T03:09:00Z',
        result: 'succeeded',
        nativeSnapshotInfo: {
          snapshotHandle: 'snap-1',
          volumeType: 'io2',
          volumeAZ: 'us-east-1a',
          iops: '4000',
          Phase: 'Completed',
        },
        pvInfo: { reclaimPolicy: 'Delete', labels: null },
      }),
    );
  });

  it('record a failed native snapshot as failed', () => {
    const entry = backupVolumeInfoOf({
      volume,
      decision: nativeDecision,
      outcome: { snapshot: snapshot('Failed') },
    });
    expect(entry).toMatchObject({
      skipped: false,
      result: 'failed',
      nativeSnapshotInfo: { snapshotHandle: '', Phase: 'Failed' },
    });
  });

  it.each<[string, VolumeDecision | undefined, string]>([
    [
      'a skip decision, prefixed by its approach',
      {
        action: 'skip',
        approach: 'any',
        reason: "matched action is 'skip' in chosen resource policies (volumePolicies[0])",
      },
      "any: matched action is 'skip' in chosen resource policies (volumePolicies[0]);",
    ],
    [
      'fs-backup the data mover did not read',
      {
        action: 'fs-backup',
        pod: { namespace: 'app', name: 'db-0', volumeName: 'storage' },
        reason: 'volumePolicies[1] asks for fs-backup',
      },
      'podvolume: selected for fs-backup (volumePolicies[1] asks for fs-backup) of pod app/db-0 volume "storage", but the data mover did not read it;',
    ],
    [
      'snapshotMoveData whose snapshot was never taken',
      { action: 'snapshot', method: 'csi', moveData: true, reason: 'snapshotVolumes is true' },
      'csiSnapshot: no CSI snapshot was taken (snapshotVolumes is true);',
    ],
    [
      'a CSI snapshot nobody took',
      { action: 'snapshot', method: 'csi', moveData: false, reason: 'snapshotVolumes is true' },
      'csiSnapshot: no CSI snapshot was taken (snapshotVolumes is true);',
    ],
    [
      'a native snapshot with no recorded outcome',
      nativeDecision,
      'volumeSnapshot: no native snapshot was recorded (snapshotVolumes is not set to false);',
    ],
    ['no decision at all', undefined, 'any: the backup made no decision for this volume;'],
  ])('mark skipped %s', (_, decision, reason) => {
    expect(backupVolumeInfoOf({ volume, ...(decision ? { decision } : {}) })).toEqual({
      pvcName: 'data',
      pvcNamespace: 'app',
      pvName: 'pv-data',
      snapshotDataMoved: false,
      preserveLocalSnapshot: false,
      skipped: true,
      skippedReason: reason,
      pvInfo: { reclaimPolicy: 'Delete', labels: null },
    });
  });

  it('say why an fs-backup volume whose files the data mover cannot reach is skipped', () => {
    const decision: VolumeDecision = {
      action: 'fs-backup',
      pod: { namespace: 'app', name: 'db-0', volumeName: 'storage' },
      reason: 'volumePolicies[1] asks for fs-backup',
    };
    expect(
      backupVolumeInfoOf({ volume, decision, filesUnreachable: 'the PV is a csi volume' }).skippedReason,
    ).toBe(
      'podvolume: selected for fs-backup (volumePolicies[1] asks for fs-backup) of pod app/db-0 volume "storage", but the PV is a csi volume;',
    );
  });

  const movedDecision: VolumeDecision = { ...nativeDecision, moveData: true };
  const movement = {
    mode: 'block' as const,
    phase: 'Completed' as const,
    operationId: 'nightly_vol-1_20260102T030405Z',
    manifestId: 'nightly_vol-1_20260102T030405Z',
    size: 8 * 1024 ** 3,
    retainedSnapshot: 'snap-1',
    completedAt: '2026-01-02T03:20:00.000Z',
  };

  it("record a native snapshot's moved data as Velero records a DataUpload, keys in Velero's order", () => {
    const entry = backupVolumeInfoOf({
      volume,
      decision: movedDecision,
      outcome: { snapshot: snapshot('Completed'), startedAt: '2026-01-02T03:04:05.678Z' },
      movement,
    });
    expect(JSON.stringify(entry)).toBe(
      JSON.stringify({
        pvcName: 'data',
        pvcNamespace: 'app',
        pvName: 'pv-data',
        backupMethod: 'NativeSnapshot',
        snapshotDataMoved: true,
        preserveLocalSnapshot: false,
        skipped: false,
        startTimestamp: '2026-01-02T03:04:05Z',
        completionTimestamp: '2026-01-02T03:20:00Z',
        result: 'succeeded',
        snapshotDataMovementInfo: {
          dataMover: 'lifeboat',
          uploaderType: 'lifeboat-block',
          retainedSnapshot: 'snap-1',
          snapshotHandle: 'nightly_vol-1_20260102T030405Z',
          operationID: 'nightly_vol-1_20260102T030405Z',
          size: 8589934592,
          Phase: 'Completed',
        },
        nativeSnapshotInfo: {
          snapshotHandle: 'snap-1',
          volumeType: 'io2',
          volumeAZ: 'us-east-1a',
          iops: '4000',
          Phase: 'Completed',
        },
        pvInfo: { reclaimPolicy: 'Delete', labels: null },
      }),
    );
  });

  it('record a failed movement of a CSI snapshot as failed, with no repository snapshot', () => {
    const entry = backupVolumeInfoOf({
      volume,
      decision: { ...movedDecision, method: 'csi' },
      csiOutcome: {
        info: {
          snapshotHandle: 'snap-2',
          size: 1,
          driver: 'ebs.csi.aws.com',
          vscName: 'c',
          operationID: 'op',
          ReadyToUse: true,
        },
        succeeded: true,
      },
      movement: { ...movement, phase: 'Failed', manifestId: '', completedAt: undefined },
    });
    expect(Object.keys(entry)).toEqual([
      'pvcName',
      'pvcNamespace',
      'pvName',
      'backupMethod',
      'snapshotDataMoved',
      'preserveLocalSnapshot',
      'skipped',
      'result',
      'csiSnapshotInfo',
      'snapshotDataMovementInfo',
      'pvInfo',
    ]);
    expect(entry).toMatchObject({
      backupMethod: 'CSISnapshot',
      snapshotDataMoved: true,
      result: 'failed',
      csiSnapshotInfo: { snapshotHandle: 'snap-2' },
      snapshotDataMovementInfo: { snapshotHandle: '', Phase: 'Failed' },
    });
  });

  it('record a volume file mode read as Velero records a pod volume backup (pvbInfo)', () => {
    const entry = backupVolumeInfoOf({
      volume,
      decision: {
        action: 'fs-backup',
        pod: { namespace: 'app', name: 'db-0', volumeName: 'storage' },
        reason: 'opted in',
      },
      movement: {
        mode: 'file',
        phase: 'Completed',
        operationId: 'nightly_pv.pv-data_20260102T030405Z',
        manifestId: 'nightly_pv.pv-data_20260102T030405Z',
        size: 1234,
        startedAt: '2026-01-02T03:04:05Z',
        completedAt: '2026-01-02T03:04:09Z',
        pod: { namespace: 'app', name: 'db-0', volumeName: 'storage', nodeName: 'node-1' },
      },
    });
    expect(JSON.stringify(entry)).toBe(
      JSON.stringify({
        pvcName: 'data',
        pvcNamespace: 'app',
        pvName: 'pv-data',
        backupMethod: 'PodVolumeBackup',
        snapshotDataMoved: false,
        preserveLocalSnapshot: false,
        skipped: false,
        startTimestamp: '2026-01-02T03:04:05Z',
        completionTimestamp: '2026-01-02T03:04:09Z',
        result: 'succeeded',
        pvbInfo: {
          snapshotHandle: 'nightly_pv.pv-data_20260102T030405Z',
          size: 1234,
          uploaderType: 'lifeboat-file',
          volumeName: 'storage',
          podName: 'db-0',
          podNamespace: 'app',
          nodeName: 'node-1',
          Phase: 'Completed',
        },
        pvInfo: { reclaimPolicy: 'Delete', labels: null },
      }),
    );
  });

  it('write metav1.Time as Go does: whole seconds, UTC', () => {
    expect(kubeTime('2026-05-01T10:11:12.999+02:00')).toBe('2026-05-01T08:11:12Z');
  });
});

describe('restore volumes-info entries', () => {
  it('record a PV re-created from a native snapshot with an empty Phase', () => {
    expect(
      JSON.stringify(
        restoredFromNativeSnapshot({
          pvName: 'pv-data',
          pvcName: 'data',
          pvcNamespace: 'app',
          snapshotHandle: 'snap-1',
          volumeType: 'gp3',
          volumeAZ: 'us-east-1a',
        }),
      ),
    ).toBe(
      JSON.stringify({
        pvcName: 'data',
        pvcNamespace: 'app',
        pvName: 'pv-data',
        restoreMethod: 'NativeSnapshot',
        snapshotDataMoved: false,
        nativeSnapshotInfo: {
          snapshotHandle: 'snap-1',
          volumeType: 'gp3',
          volumeAZ: 'us-east-1a',
          iops: '0',
          Phase: '',
        },
      }),
    );
  });
});

describe('the volumes of a backup', () => {
  it('pair each PVC with its bound PV and keep unbound PVCs and unclaimed PVs', () => {
    const volumes = backupVolumesOf({
      pvcs: [
        claimFactsOf({ metadata: { namespace: 'app', name: 'data' }, spec: { volumeName: 'pv-data' } }),
        claimFactsOf({ metadata: { namespace: 'app', name: 'pending' }, spec: {} }),
      ],
      pvs: [
        persistentVolumeFactsOf({
          metadata: { name: 'pv-data', labels: { zone: 'a' } },
          spec: { persistentVolumeReclaimPolicy: 'Retain', claimRef: { namespace: 'app', name: 'data' } },
        }),
        persistentVolumeFactsOf({
          metadata: { name: 'pv-orphan' },
          spec: { persistentVolumeReclaimPolicy: 'Delete', claimRef: { namespace: 'gone', name: 'old' } },
        }),
      ],
    });
    expect(volumes).toEqual([
      {
        pvcNamespace: 'app',
        pvcName: 'data',
        pvName: 'pv-data',
        pvInfo: { reclaimPolicy: 'Retain', labels: { zone: 'a' } },
      },
      { pvcNamespace: 'app', pvcName: 'pending' },
      {
        pvcNamespace: 'gone',
        pvcName: 'old',
        pvName: 'pv-orphan',
        pvInfo: { reclaimPolicy: 'Delete', labels: null },
      },
    ]);
  });

  it('name a PVC whose PV the backup left out by its volumeName', () => {
    expect(backupVolumesOf({ pvcs: [{ namespace: 'a', name: 'c', volumeName: 'pv-x' }], pvs: [] })).toEqual([
      { pvcNamespace: 'a', pvcName: 'c', pvName: 'pv-x' },
    ]);
  });

  it('assemble one entry per volume, preferring the record with a snapshot outcome, and return records naming no volume', () => {
    const skip: VolumeDecision = { action: 'skip', approach: 'any', reason: 'x' };
    const stray: HandledVolume = { pvName: 'pv-elsewhere', decision: skip };
    const { infos, unmatched } = assembleBackupVolumeInfos({
      volumes: [volume, { pvcNamespace: 'app', pvcName: 'pending' }],
      handled: [
        { pvcNamespace: 'app', pvcName: 'data', decision: nativeDecision },
        { pvName: 'pv-data', decision: nativeDecision, outcome: { snapshot: snapshot('Completed') } },
        stray,
      ],
    });
    expect(infos.map((i) => [i.pvcName, i.skipped, i.backupMethod])).toEqual([
      ['data', false, 'NativeSnapshot'],
      ['pending', true, undefined],
    ]);
    expect(infos[1]?.skippedReason).toBe('any: the backup made no decision for this volume;');
    expect(unmatched).toEqual([stray]);
  });
});

describe('one volumes-info entry per volume (property)', () => {
  const name = fc.constantFrom('a', 'b', 'c', 'd');
  const claims = fc.array(
    fc.record({
      namespace: fc.constantFrom('n1', 'n2'),
      name,
      volumeName: fc.option(fc.constantFrom('pv-a', 'pv-b', 'pv-c', 'pv-z'), { nil: undefined }),
    }),
    { maxLength: 8 },
  );
  const pvs = fc.uniqueArray(
    fc.record({
      name: fc.constantFrom('pv-a', 'pv-b', 'pv-c', 'pv-d'),
      claim: fc.option(fc.record({ namespace: fc.constantFrom('n1', 'n2'), name }), { nil: undefined }),
    }),
    { selector: (pv) => pv.name, maxLength: 4 },
  );
  const decisions = fc.constantFrom<VolumeDecision>(
    { action: 'skip', approach: 'volumeSnapshot', reason: 'r' },
    { action: 'fs-backup', pod: { namespace: 'n1', name: 'p', volumeName: 'v' }, reason: 'r' },
    { action: 'snapshot', method: 'csi', moveData: true, reason: 'r' },
    nativeDecision,
  );

  it('names every PVC and every PV of the backup in exactly one entry, each entry done or skipped with a reason', () => {
    fc.assert(
      fc.property(
        claims,
        pvs,
        fc.array(fc.tuple(fc.nat(), decisions, fc.boolean()), { maxLength: 10 }),
        (rawClaims, rawPvs, picks) => {
          const pvcs: ClaimFacts[] = rawClaims.map((c) =>
            c.volumeName ? c : { namespace: c.namespace, name: c.name },
          );
          const pvFacts: PersistentVolumeFacts[] = rawPvs.map((p) => (p.claim ? p : { name: p.name }));
          const volumes = backupVolumesOf({ pvcs, pvs: pvFacts });
          const handled: HandledVolume[] = picks.flatMap(([i, decision, withOutcome]) => {
            const v = volumes[i % Math.max(volumes.length, 1)];
            if (!v) return [];
            return [
              { ...v, decision, ...(withOutcome ? { outcome: { snapshot: snapshot('Completed') } } : {}) },
            ];
          });
          const { infos, unmatched } = assembleBackupVolumeInfos({ volumes, handled });

          expect(infos).toHaveLength(volumes.length);
          expect(unmatched).toEqual([]);
          const pvcKeys = new Set(pvcs.map((c) => `${c.namespace}/${c.name}`));
          for (const key of pvcKeys) {
            expect(infos.filter((i) => `${i.pvcNamespace}/${i.pvcName}` === key)).toHaveLength(1);
          }
          for (const pv of pvFacts) expect(infos.filter((i) => i.pvName === pv.name)).toHaveLength(1);
          const pvNames = infos.flatMap((i) => (i.pvName ? [i.pvName] : []));
          expect(new Set(pvNames).size).toBe(pvNames.length);
          for (const info of infos) {
            expect(
              info.skipped
                ? !!info.skippedReason && !info.backupMethod
                : !!info.backupMethod && !info.skippedReason,
            ).toBe(true);
          }
        },
      ),
    );
  });
});
