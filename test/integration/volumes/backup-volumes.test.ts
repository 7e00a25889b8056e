/**
 * Volumes in a backup, end to end through the local runtime, against the real apiserver and the
 * EC2 of the AWS emulator: native EBS snapshots tagged as Velero tags them and waited on, the
 * side files (volumes-info, volumesnapshots, itemoperations) and status counters, resource
 * policies inline and from a ConfigMap, volumes left for the data mover, and a PVC without a PV.
 */
import { gunzipSync } from 'node:zlib';
import { DeleteSnapshotCommand } from '@aws-sdk/client-ec2';
import { describe, expect, it } from 'vitest';
import { renderBackupDescribe } from '../../../cli/render/backups.js';
import { readBackup } from '../../../functions/common/stored-records.js';
import { EbsSnapshotter } from '../../../shared/adapters/ebs-snapshotter.js';
import type { BackupDocument } from '../../../shared/domain/storage/backup-document.js';
import { backupKeys } from '../../../shared/domain/storage/keys.js';
import type { ObjectStore } from '../../../shared/ports/object-store.js';
import { backup, backupRequest, tempStore } from '../backup/support.js';
import { awsConfig, uniqueName } from '../support/env.js';
import {
  ec2,
  storedJson as json,
  snapshotsOfBackup as snapshotsOf,
  useVolumeFixtures,
} from '../support/volumes.js';

interface VolumeInfo {
  pvcName?: string;
  pvcNamespace?: string;
  pvName?: string;
  backupMethod?: string;
  skipped: boolean;
  skippedReason?: string;
  result?: string;
  nativeSnapshotInfo?: Record<string, unknown>;
  pvInfo?: Record<string, unknown>;
  startTimestamp?: string;
  completionTimestamp?: string;
}

describe('volumes in a backup', () => {
  const region = () => awsConfig().region;
  const snapshotter = () => new EbsSnapshotter({ client: ec2() });
  const run = (options: {
    store: ObjectStore;
    name: string;
    spec: Record<string, unknown>;
    labels?: Record<string, string>;
  }) => {
    const request = backupRequest(options.name, options.spec) as {
      backup: { metadata: Record<string, unknown> };
    };
    if (options.labels) request.backup.metadata.labels = options.labels;
    return backup({
      kc: fixtures.kc,
      store: options.store,
      request,
      // CSI stays out of these tests: an ebs.csi.aws.com PV is snapshotted through EC2.
      extra: { snapshotter: snapshotter(), csiSnapshots: false, volumePollSeconds: 1 },
    });
  };
  const fixtures = useVolumeFixtures();

  it("snapshots a pod's EBS volumes natively with Velero's tags, waits for them and records them", async () => {
    const namespace = await fixtures.namespace('vol-native');
    const zone = `${region()}a`;
    const csiVolume = await fixtures.ebsVolume({
      zone,
      tags: { Name: 'db-data', 'velero.io/backup': 'stale' },
    });
    const inTreeVolume = await fixtures.ebsVolume({ zone: `${region()}b`, tags: { Name: 'db-logs' } });
    const csiPv = await fixtures.claimWithVolume({
      namespace,
      claim: 'data',
      zone,
      source: { csi: { driver: 'ebs.csi.aws.com', volumeHandle: csiVolume, fsType: 'ext4' } },
      pod: { name: 'db' },
    });
    const inTreePv = await fixtures.claimWithVolume({
      namespace,
      claim: 'logs',
      source: { awsElasticBlockStore: { volumeID: `aws://${region()}b/${inTreeVolume}`, fsType: 'ext4' } },
    });
    const store = await tempStore();
    const name = uniqueName('native');
    const outcome = await run({
      store,
      name,
      spec: { includedNamespaces: [namespace] },
      labels: { team: 'data' },
    });
    expect(outcome).toMatchObject({ ok: true, output: { name, phase: 'Completed', errors: 0 } });

    // Each volume has one snapshot in EC2, tagged as Velero tags it (its tags win over the volume's).
    const snapshots = await snapshotsOf(name);
    expect(snapshots.map((s) => s.VolumeId).sort()).toEqual([csiVolume, inTreeVolume].sort());
    const tagsOf = (volumeId: string) =>
      Object.fromEntries(
        (snapshots.find((s) => s.VolumeId === volumeId)?.Tags ?? []).map((t) => [t.Key, t.Value]),
      );
    expect(tagsOf(csiVolume)).toEqual({
      team: 'data',
      'velero.io/storage-location': 'default',
      'velero.io/backup': name,
      'velero.io/pv': csiPv,
      Name: 'db-data',
    });
    expect(tagsOf(inTreeVolume)).toMatchObject({
      'velero.io/backup': name,
      'velero.io/pv': inTreePv,
      Name: 'db-logs',
    });

    const keys = backupKeys(name);
    const infos = await json<VolumeInfo[]>(store, keys.volumeInfo);
    const byPvc = (pvc: string) => infos.filter((i) => i.pvcName === pvc);
    expect(byPvc('data')).toHaveLength(1);
    expect(byPvc('logs')).toHaveLength(1);
    const csiSnapshot = snapshots.find((s) => s.VolumeId === csiVolume)?.SnapshotId;
    expect(byPvc('data')[0]).toMatchObject({
      pvcNamespace: namespace,
      pvName: csiPv,
      backupMethod: 'NativeSnapshot',
      snapshotDataMoved: false,
      skipped: false,
      result: 'succeeded',
      startTimestamp: expect.stringMatching(/Z$/),
      completionTimestamp: expect.stringMatching(/Z$/),
      nativeSnapshotInfo: {
        snapshotHandle: csiSnapshot,
        volumeType: 'io1',
        volumeAZ: zone,
        iops: '500',
        Phase: 'Completed',
      },
      pvInfo: { reclaimPolicy: 'Retain', labels: { app: 'db', 'topology.kubernetes.io/zone': zone } },
    });
    // No zone label on the in-tree PV: the zone of its aws://<zone>/ volume id.
    expect(byPvc('logs')[0]?.nativeSnapshotInfo).toMatchObject({
      volumeAZ: `${region()}b`,
      Phase: 'Completed',
    });

    const native = await json<{ spec: Record<string, unknown>; status: Record<string, unknown> }[]>(
      store,
      keys.volumeSnapshots,
    );
    expect(native).toHaveLength(2);
    expect(native).toContainEqual({
      spec: {
        backupName: name,
        backupUID: expect.any(String),
        location: 'default',
        persistentVolumeName: csiPv,
        providerVolumeID: csiVolume,
        volumeType: 'io1',
        volumeAZ: zone,
        volumeIOPS: 500,
      },
      status: { providerSnapshotID: csiSnapshot, phase: 'Completed' },
    });
    const operations = await json<{ spec: Record<string, unknown>; status: Record<string, unknown> }[]>(
      store,
      keys.itemOperations,
    );
    expect(operations).toHaveLength(2);
    expect(operations).toContainEqual({
      spec: {
        backupName: name,
        backupUID: expect.any(String),
        backupItemAction: 'lifeboat.io/ebs-volume-snapshotter',
        ResourceIdentifier: { Group: '', Resource: 'persistentvolumes', Namespace: '', Name: csiPv },
        OperationID: csiSnapshot,
        PostOperationItems: null,
      },
      status: expect.objectContaining({
        phase: 'Completed',
        nCompleted: 100,
        nTotal: 100,
        operationUnits: '%',
      }),
    });
    const document = await json<BackupDocument>(store, keys.metadata);
    expect(document.status).toMatchObject({
      phase: 'Completed',
      volumeSnapshotsAttempted: 2,
      volumeSnapshotsCompleted: 2,
      backupItemOperationsAttempted: 2,
      backupItemOperationsCompleted: 2,
    });
    expect(document.status).not.toHaveProperty('backupItemOperationsFailed');
    expect(document.status).not.toHaveProperty('csiVolumeSnapshotsAttempted');
    const log = gunzipSync((await store.get(keys.logs)) ?? new Uint8Array()).toString('utf8');
    expect(log).toContain('Started native EBS snapshot of PVC');
    // `lifeboat backup describe --details` reads the same files.
    const stored = await readBackup(store, name);
    const described = renderBackupDescribe({ ...(stored as NonNullable<typeof stored>), details: true });
    expect(described).toContain('Backup Item Operations:\n  Operation for persistentvolumes /');
    expect(described).toContain(
      `    ${csiPv}:\n      Snapshot ID:        ${csiSnapshot}\n      Type:               io1`,
    );
    for (const s of snapshots) await ec2().send(new DeleteSnapshotCommand({ SnapshotId: s.SnapshotId }));
  });

  it('skips a volume an inline resource policy skips, and gives an unbound PVC its one entry', async () => {
    const namespace = await fixtures.namespace('vol-skip');
    const volume = await fixtures.ebsVolume({ zone: `${region()}a` });
    const pv = await fixtures.claimWithVolume({
      namespace,
      claim: 'data',
      source: { csi: { driver: 'ebs.csi.aws.com', volumeHandle: volume } },
      pod: { name: 'db' },
    });
    await fixtures.claimWithVolume({ namespace, claim: 'pending' });
    const store = await tempStore();
    const name = uniqueName('skip');
    const outcome = await run({
      store,
      name,
      spec: {
        includedNamespaces: [namespace],
        resourcePolicy: {
          inline: {
            version: 'v1',
            volumePolicies: [
              { conditions: { csi: { driver: 'ebs.csi.aws.com' } }, action: { type: 'skip' } },
            ],
          },
        },
      },
    });
    expect(outcome).toMatchObject({ ok: true, output: { phase: 'Completed' } });
    expect(await snapshotsOf(name)).toEqual([]);
    const infos = await json<VolumeInfo[]>(store, backupKeys(name).volumeInfo);
    expect(infos).toHaveLength(2);
    expect(infos.find((i) => i.pvcName === 'data')).toMatchObject({
      pvName: pv,
      skipped: true,
      skippedReason: "any: matched action is 'skip' in chosen resource policies (volumePolicies[0]);",
      pvInfo: { reclaimPolicy: 'Retain' },
    });
    expect(infos.find((i) => i.pvcName === 'pending')).toMatchObject({
      pvcNamespace: namespace,
      skipped: true,
      skippedReason: expect.stringContaining('not bound to a PV'),
    });
    expect(infos.find((i) => i.pvcName === 'pending')).not.toHaveProperty('pvName');
    // Velero writes no native snapshots as null (a nil Go slice); its item operations as [].
    expect(await json(store, backupKeys(name).volumeSnapshots)).toBeNull();
    expect(await json(store, backupKeys(name).itemOperations)).toEqual([]);
  });

  it('without a data mover, snapshots a snapshotMoveData volume but fails its move, and skips fs-backup volumes, saying why', async () => {
    const namespace = await fixtures.namespace('vol-mover');
    const moved = await fixtures.ebsVolume({ zone: `${region()}a` });
    const fs = await fixtures.ebsVolume({ zone: `${region()}a` });
    await fixtures.claimWithVolume({
      namespace,
      claim: 'moved',
      source: { csi: { driver: 'ebs.csi.aws.com', volumeHandle: moved } },
      pod: { name: 'mover' },
    });
    await fixtures.claimWithVolume({
      namespace,
      claim: 'files',
      source: { csi: { driver: 'ebs.csi.aws.com', volumeHandle: fs } },
      pod: { name: 'files', annotations: { 'backup.velero.io/backup-volumes': 'data' } },
    });
    const store = await tempStore();
    const name = uniqueName('mover');
    const outcome = await run({
      store,
      name,
      spec: { includedNamespaces: [namespace], snapshotMoveData: true },
    });
    expect(outcome).toMatchObject({ ok: true, output: { phase: 'PartiallyFailed', errors: 1, warnings: 1 } });
    const [snapshot] = await snapshotsOf(name);
    expect(snapshot?.VolumeId).toBe(moved);
    const infos = await json<VolumeInfo[]>(store, backupKeys(name).volumeInfo);
    expect(infos).toHaveLength(2);
    expect(infos.find((i) => i.pvcName === 'moved')).toMatchObject({
      backupMethod: 'NativeSnapshot',
      snapshotDataMoved: true,
      skipped: false,
      result: 'failed',
      nativeSnapshotInfo: { snapshotHandle: snapshot?.SnapshotId, Phase: 'Completed' },
      snapshotDataMovementInfo: { dataMover: 'lifeboat', snapshotHandle: '', Phase: 'Failed' },
    });
    expect(infos.find((i) => i.pvcName === 'files')).toMatchObject({
      skipped: true,
      skippedReason: expect.stringMatching(
        /^podvolume: selected for fs-backup .*, but no data mover of this run can reach pod volumes/,
      ),
    });
    const results = await json<{
      errors: { namespaces?: Record<string, string[]> };
      warnings: { namespaces?: Record<string, string[]> };
    }>(store, backupKeys(name).results);
    expect(results.errors.namespaces?.[namespace]).toEqual([
      expect.stringMatching(/^data movement of PVC .*\/moved .* failed: this run has no data mover/),
    ]);
    expect(results.warnings.namespaces?.[namespace]).toEqual([
      expect.stringContaining('files is not backed up: selected for fs-backup'),
    ]);
  });

  it('reads the resource policy from a ConfigMap, and refuses a missing one by field path', async () => {
    const namespace = await fixtures.namespace('vol-cm');
    const volume = await fixtures.ebsVolume({ zone: `${region()}a` });
    await fixtures.claimWithVolume({
      namespace,
      claim: 'data',
      source: { csi: { driver: 'ebs.csi.aws.com', volumeHandle: volume } },
    });
    await fixtures.api.createNamespacedConfigMap({
      namespace,
      body: {
        metadata: { name: 'volume-policy' },
        data: {
          'policy.yaml':
            'version: v1\nvolumePolicies:\n- conditions:\n    capacity: "0,100Gi"\n  action:\n    type: skip\n',
        },
      },
    });
    const store = await tempStore();
    const name = uniqueName('cm');
    const outcome = await run({
      store,
      name,
      spec: {
        includedNamespaces: [namespace],
        resourcePolicy: { kind: 'configmap', name: 'volume-policy', namespace },
      },
    });
    expect(outcome).toMatchObject({ ok: true, output: { phase: 'Completed' } });
    const infos = await json<VolumeInfo[]>(store, backupKeys(name).volumeInfo);
    expect(infos).toEqual([
      expect.objectContaining({
        pvcName: 'data',
        skipped: true,
        skippedReason: expect.stringContaining('volumePolicies[0]'),
      }),
    ]);

    const missing = await run({
      store,
      name: uniqueName('cm-missing'),
      spec: {
        includedNamespaces: [namespace],
        resourcePolicy: { kind: 'configmap', name: 'nope', namespace },
      },
    });
    expect(missing).toMatchObject({
      ok: false,
      error: 'FailedValidation',
      cause: `backup.spec.resourcePolicy.name: ConfigMap ${namespace}/nope not found`,
    });
  });

  it('fails a volume whose EBS volume does not exist, and the backup ends PartiallyFailed', async () => {
    const namespace = await fixtures.namespace('vol-gone');
    await fixtures.claimWithVolume({
      namespace,
      claim: 'data',
      source: { csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-0123456789abcdef0' } },
    });
    const store = await tempStore();
    const name = uniqueName('gone');
    const outcome = await run({ store, name, spec: { includedNamespaces: [namespace] } });
    expect(outcome).toMatchObject({ ok: true, output: { phase: 'PartiallyFailed' } });
    const infos = await json<VolumeInfo[]>(store, backupKeys(name).volumeInfo);
    expect(infos).toEqual([
      expect.objectContaining({ pvcName: 'data', backupMethod: 'NativeSnapshot', result: 'failed' }),
    ]);
    const document = await json<BackupDocument>(store, backupKeys(name).metadata);
    expect(document.status).toMatchObject({ phase: 'PartiallyFailed', volumeSnapshotsAttempted: 1 });
    expect(document.status).not.toHaveProperty('volumeSnapshotsCompleted');
    const results = await json<{ errors: { namespaces?: Record<string, string[]> } }>(
      store,
      backupKeys(name).results,
    );
    expect(results.errors.namespaces?.[namespace]?.join('\n')).toContain('InvalidVolume.NotFound');
  });
});
