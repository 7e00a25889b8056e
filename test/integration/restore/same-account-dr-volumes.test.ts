/**
 * A DR deployment in the backup's own account, in another region, against moto: copySnapshots
 * names only that region (no account: the backup's own), VolumeOperations' copy steps
 * (advanceCopies over EbsSnapshotCopies, the ambient credentials) record the copy's owner as the
 * backup's account, and a restore whose home is the deployment's (its account named, as
 * LIFEBOAT_DEPLOYMENT_ACCOUNT names it, and its region) picks that copy, and RestoreVolumes, with
 * the deployment's own EC2, makes the volume from it there.
 */
import {
  CreateSnapshotCommand,
  CreateVolumeCommand,
  DescribeVolumesCommand,
  EC2Client,
} from '@aws-sdk/client-ec2';
import { describe, expect, it } from 'vitest';
import { volumeHomeOf } from '../../../functions/plan-restore/plan-volumes.js';
import { restoreVolumes } from '../../../functions/restore-volumes/restore-volumes.js';
import { advanceCopies, withSnapshotCopies } from '../../../functions/volume-operations/snapshot-copies.js';
import { EbsSnapshotCopies } from '../../../shared/adapters/ebs-snapshot-copies.js';
import { EbsSnapshotter } from '../../../shared/adapters/ebs-snapshotter.js';
import { systemClock } from '../../../shared/adapters/system-clock.js';
import type { SnapshotCopy } from '../../../shared/contracts/backup-volumes.js';
import type { PlannedItem, RestoreRun } from '../../../shared/contracts/restore-run.js';
import type { VolumePlan } from '../../../shared/contracts/restore-volumes.js';
import { restoreWorkKeys } from '../../../shared/domain/storage/keys.js';
import type { BackupVolumeInfo } from '../../../shared/domain/volumes/info-shapes.js';
import { planVolumeRestore } from '../../../shared/domain/volumes/restore.js';
import { tempStore } from '../backup/support.js';
import { awsConfig, testEnv, uniqueName } from '../support/env.js';

const SOURCE_REGION = 'us-east-1';
const DR_REGION = 'us-west-2';

/** A completed snapshot of a volume in the source account and region. */
async function sourceSnapshot(): Promise<string> {
  const ec2 = new EC2Client(awsConfig({ region: SOURCE_REGION }));
  const volume = await ec2.send(
    new CreateVolumeCommand({ AvailabilityZone: `${SOURCE_REGION}a`, Size: 4, VolumeType: 'gp3' }),
  );
  return (await ec2.send(new CreateSnapshotCommand({ VolumeId: volume.VolumeId }))).SnapshotId ?? '';
}

/** The snapshot copied into region 2 of the same account, as `copySnapshots: [{region}]` asks. */
async function copiedToOwnRegion(snapshotId: string): Promise<SnapshotCopy[]> {
  const copier = new EbsSnapshotCopies({
    sourceRegion: SOURCE_REGION,
    endpoint: testEnv().aws.endpoint,
    credentials: awsConfig().credentials,
  });
  const copies: SnapshotCopy[] = [
    { target: { region: DR_REGION }, sourceSnapshotHandle: snapshotId, snapshotHandle: '', Phase: 'New' },
  ];
  const context = { copier, backupName: 'nightly', timeoutMs: 60_000, signal: undefined, copies };
  for (let look = 0; look < 10 && copies[0]?.Phase !== 'Completed'; look++)
    await advanceCopies({ ...context, now: new Date() });
  return copies;
}

const pvObject = {
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name: 'pv-data' },
  spec: {
    capacity: { storage: '4Gi' },
    csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-0source' },
    persistentVolumeReclaimPolicy: 'Delete',
    claimRef: { namespace: 'shop', name: 'data' },
  },
};

const infoOf = (snapshotId: string): BackupVolumeInfo => ({
  pvcName: 'data',
  pvcNamespace: 'shop',
  pvName: 'pv-data',
  backupMethod: 'NativeSnapshot',
  snapshotDataMoved: false,
  preserveLocalSnapshot: false,
  skipped: false,
  nativeSnapshotInfo: {
    snapshotHandle: snapshotId,
    volumeType: 'gp3',
    volumeAZ: `${SOURCE_REGION}a`,
    iops: '',
    Phase: 'Completed',
  },
});

describe('a DR deployment in the backup’s own account, in another region', () => {
  it('restores a native volume from the account-less copy there, which records its account', async () => {
    // Prepare: the snapshot and its copy; volumes-info as FinalizeBackup records it
    const source = testEnv().aws.accounts.source;
    const snapshotId = await sourceSnapshot();
    const copies = await copiedToOwnRegion(snapshotId);
    expect(copies[0]).toMatchObject({ Phase: 'Completed', backupAccount: source });
    const [info] = withSnapshotCopies([infoOf(snapshotId)], copies);
    expect(info?.snapshotCopies).toEqual([expect.objectContaining({ backupAccount: source })]);
    expect(info?.snapshotCopies?.[0]?.account).toBeUndefined();

    // Act: PlanRestore's volume decision in the DR deployment (its home: its account and region),
    // then RestoreVolumes with the deployment's own EC2
    const deployment = { account: source, region: DR_REGION };
    const decided = planVolumeRestore({
      infos: [info as BackupVolumeInfo],
      pvs: [pvObject],
      pvcs: [],
      ...volumeHomeOf({}, deployment),
      existingPvs: new Set(),
      existingPvcs: new Set(),
      names: { clone: () => 'clone', snapshot: () => 'snapshot' },
    });
    const store = await tempStore();
    const run: RestoreRun = {
      name: uniqueName('same-account-dr'),
      backupName: 'nightly',
      cluster: 'dr',
      runId: uniqueName('run'),
      startedAt: new Date().toISOString(),
      dryRun: false,
    };
    const work = restoreWorkKeys(run);
    await store.put(
      work.request,
      JSON.stringify({ cluster: run.cluster, restore: { metadata: { name: run.name }, spec: {} } }),
    );
    const plan: VolumePlan = { native: decided.native, provisioned: [], restoreInfos: [], log: [] };
    await store.put(work.volumes, JSON.stringify(plan));
    const pvs: PlannedItem[] = decided.pvs.map((object) => ({
      groupResource: 'persistentvolumes',
      sourceNamespace: '',
      object,
    }));
    await store.put(work.chunk('persistentvolumes', 0), JSON.stringify(pvs));
    const ec2 = new EC2Client(awsConfig({ region: DR_REGION }));
    const result = await restoreVolumes(
      { run },
      {
        store,
        clock: systemClock,
        snapshotter: new EbsSnapshotter({ client: ec2 }),
        pollWithinMs: 5_000,
        pollIntervalMs: 100,
      },
    );

    // Assess: planned from the copy, in a zone of region 2, and the volume made from it there
    expect(decided.notes.filter((n) => n.level === 'error')).toEqual([]);
    expect(decided.native.map((v) => v.snapshotHandle)).toEqual([copies[0]?.snapshotHandle]);
    expect(result).toEqual({ done: true, pending: 0, waitSeconds: 0 });
    const raw = await store.get(work.chunk('persistentvolumes', 0));
    const [pv] = JSON.parse(Buffer.from(raw ?? []).toString('utf8')) as PlannedItem[];
    const volumeId = (pv?.object.spec as typeof pvObject.spec | undefined)?.csi.volumeHandle ?? '';
    expect(volumeId).toMatch(/^vol-/);
    const seen = await ec2.send(new DescribeVolumesCommand({ VolumeIds: [volumeId] }));
    expect(seen.Volumes?.[0]).toMatchObject({
      SnapshotId: copies[0]?.snapshotHandle,
      AvailabilityZone: `${DR_REGION}a`,
    });
  });
});
