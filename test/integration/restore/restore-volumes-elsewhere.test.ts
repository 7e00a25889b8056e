/**
 * A native volume restored in the DR account and region, against moto's two accounts: the
 * source account's encrypted snapshot is copied into account B region 2 by the real
 * copySnapshots path (VolumeOperations' advanceCopies over EbsSnapshotCopies: share, KMS grant,
 * CopySnapshot through B's role, re-encrypted with B's key); the restore plan picks that copy,
 * and RestoreVolumes creates the volume there through B's role (ebsSnapshotterAt), encrypted
 * with B's key, and points the PV at it in B's zone.
 */
import {
  CreateSnapshotCommand,
  CreateVolumeCommand,
  DescribeVolumesCommand,
  EC2Client,
  type EC2ClientConfig,
} from '@aws-sdk/client-ec2';
import { CreateKeyCommand, KMSClient, type KMSClientConfig } from '@aws-sdk/client-kms';
import { describe, expect, it } from 'vitest';
import { volumeHomeOf } from '../../../functions/plan-restore/plan-volumes.js';
import { restoreVolumes } from '../../../functions/restore-volumes/restore-volumes.js';
import { advanceCopies, withSnapshotCopies } from '../../../functions/volume-operations/snapshot-copies.js';
import { assumedRoleCredentials } from '../../../shared/adapters/ebs-snapshot-blocks.js';
import { EbsSnapshotCopies } from '../../../shared/adapters/ebs-snapshot-copies.js';
import { EbsSnapshotter } from '../../../shared/adapters/ebs-snapshotter.js';
import { ebsSnapshotterAt } from '../../../shared/adapters/ebs-volume-places.js';
import { systemClock } from '../../../shared/adapters/system-clock.js';
import type { SnapshotCopy } from '../../../shared/contracts/backup-volumes.js';
import type { PlannedItem, RestoreRun } from '../../../shared/contracts/restore-run.js';
import type { VolumePlan } from '../../../shared/contracts/restore-volumes.js';
import { restoreWorkKeys } from '../../../shared/domain/storage/keys.js';
import type { BackupVolumeInfo } from '../../../shared/domain/volumes/info-shapes.js';
import { planVolumeRestore } from '../../../shared/domain/volumes/restore.js';
import type { ObjectStore } from '../../../shared/ports/object-store.js';
import { tempStore } from '../backup/support.js';
import { awsConfig, testEnv, uniqueName } from '../support/env.js';

const SOURCE_REGION = 'us-east-1';
const DR_REGION = 'us-west-2';
const EXTERNAL_ID = 'lifeboat-dr-restore';
const drRole = (): string => `arn:aws:iam::${testEnv().aws.accounts.dr}:role/lifeboat-restore`;

/** Account B's clients in its region, through its role. */
function drConfig(): EC2ClientConfig & KMSClientConfig {
  const env = testEnv();
  return {
    region: DR_REGION,
    endpoint: env.aws.endpoint,
    credentials: assumedRoleCredentials({
      region: DR_REGION,
      endpoint: env.aws.endpoint,
      credentials: awsConfig().credentials,
      roleArn: drRole(),
      externalId: EXTERNAL_ID,
    }),
  };
}

/** A completed snapshot in account A region 1 of a volume encrypted with A's own key. */
async function sourceSnapshot(): Promise<string> {
  const config = awsConfig({ region: SOURCE_REGION });
  const key = await new KMSClient(config).send(new CreateKeyCommand({ Description: 'source volumes' }));
  const ec2 = new EC2Client(config);
  const volume = await ec2.send(
    new CreateVolumeCommand({
      AvailabilityZone: `${SOURCE_REGION}a`,
      Size: 4,
      VolumeType: 'gp3',
      Encrypted: true,
      KmsKeyId: key.KeyMetadata?.Arn,
    }),
  );
  return (await ec2.send(new CreateSnapshotCommand({ VolumeId: volume.VolumeId }))).SnapshotId ?? '';
}

/** The snapshot copied into B region 2 with B's key by VolumeOperations' copy steps. */
async function copiedToDr(snapshotId: string, drKeyArn: string): Promise<SnapshotCopy[]> {
  const env = testEnv();
  const copier = new EbsSnapshotCopies({
    sourceRegion: SOURCE_REGION,
    endpoint: env.aws.endpoint,
    credentials: awsConfig().credentials,
  });
  const copies: SnapshotCopy[] = [
    {
      target: {
        account: env.aws.accounts.dr,
        region: DR_REGION,
        kmsKeyId: drKeyArn,
        roleArn: drRole(),
        externalId: EXTERNAL_ID,
      },
      sourceSnapshotHandle: snapshotId,
      snapshotHandle: '',
      Phase: 'New',
    },
  ];
  const context = { copier, backupName: 'nightly', timeoutMs: 60_000, signal: undefined, copies };
  for (let look = 0; look < 10 && copies[0]?.Phase !== 'Completed'; look++)
    await advanceCopies({ ...context, now: new Date() });
  return copies;
}

const pvObject = {
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name: 'pv-data', labels: { 'topology.kubernetes.io/zone': `${SOURCE_REGION}a` } },
  spec: {
    capacity: { storage: '4Gi' },
    csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-0source' },
    persistentVolumeReclaimPolicy: 'Delete',
    claimRef: { namespace: 'shop', name: 'data' },
    nodeAffinity: {
      required: {
        nodeSelectorTerms: [
          {
            matchExpressions: [
              { key: 'topology.kubernetes.io/zone', operator: 'In', values: [`${SOURCE_REGION}a`] },
            ],
          },
        ],
      },
    },
  },
};

/** PlanRestore's working data for the restore: the request, the volume plan, the PV chunk. */
async function planned(options: {
  store: ObjectStore;
  run: RestoreRun;
  spec: Record<string, unknown>;
  info: BackupVolumeInfo;
}): Promise<VolumePlan['native']> {
  const { store, run, spec } = options;
  const decided = planVolumeRestore({
    infos: [options.info],
    pvs: [pvObject],
    pvcs: [],
    availabilityZone: String(spec.volumeAvailabilityZone),
    ...volumeHomeOf(spec),
    existingPvs: new Set(),
    existingPvcs: new Set(),
    names: { clone: () => 'clone', snapshot: () => 'snapshot' },
  });
  const work = restoreWorkKeys(run);
  await store.put(
    work.request,
    JSON.stringify({ cluster: run.cluster, restore: { metadata: { name: run.name }, spec } }),
  );
  const plan: VolumePlan = { native: decided.native, provisioned: [], restoreInfos: [], log: [] };
  await store.put(work.volumes, JSON.stringify(plan));
  const items: PlannedItem[] = decided.pvs.map((object) => ({
    groupResource: 'persistentvolumes',
    sourceNamespace: '',
    object,
  }));
  await store.put(work.chunk('persistentvolumes', 0), JSON.stringify(items));
  return decided.native;
}

describe('a native volume restored in the DR account and region', () => {
  it('is made from the copy in account B region 2, encrypted with B’s key, and the PV points at it', async () => {
    // Prepare: the source snapshot, B's key, the copy; volumes-info as FinalizeBackup records it
    const env = testEnv();
    const snapshotId = await sourceSnapshot();
    const drKey = await new KMSClient(drConfig()).send(new CreateKeyCommand({ Description: 'dr volumes' }));
    const drKeyArn = drKey.KeyMetadata?.Arn ?? '';
    const copies = await copiedToDr(snapshotId, drKeyArn);
    expect(copies[0]).toMatchObject({ Phase: 'Completed', snapshotHandle: expect.stringMatching(/^snap-/) });
    const [info] = withSnapshotCopies(
      [
        {
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
        },
      ],
      copies,
    );
    const store = await tempStore();
    const run: RestoreRun = {
      name: uniqueName('dr-volumes'),
      backupName: 'nightly',
      cluster: 'dr',
      runId: uniqueName('run'),
      startedAt: new Date().toISOString(),
      dryRun: false,
    };
    const native = await planned({
      store,
      run,
      info: info as BackupVolumeInfo,
      spec: {
        backupName: 'nightly',
        volumeRegion: DR_REGION,
        volumeAvailabilityZone: `${DR_REGION}b`,
        volumeAccountRoleArn: drRole(),
        volumeAccountExternalId: EXTERNAL_ID,
        volumeKmsKeyId: drKeyArn,
      },
    });
    expect(native.map((v) => v.snapshotHandle)).toEqual([copies[0]?.snapshotHandle]);

    // Act: the function's own EC2 is account A region 1; the volume's place is B region 2
    const result = await restoreVolumes(
      { run },
      {
        store,
        clock: systemClock,
        snapshotter: new EbsSnapshotter({ client: new EC2Client(awsConfig({ region: SOURCE_REGION })) }),
        snapshotterAt: ebsSnapshotterAt({ endpoint: env.aws.endpoint, credentials: awsConfig().credentials }),
        pollWithinMs: 5_000,
        pollIntervalMs: 100,
      },
    );

    // Assess: the volume in B region 2 from the copy, under B's key; the PV on it, in B's zone
    expect(result).toEqual({ done: true, pending: 0, waitSeconds: 0 });
    const raw = await store.get(restoreWorkKeys(run).chunk('persistentvolumes', 0));
    const [pv] = JSON.parse(Buffer.from(raw ?? []).toString('utf8')) as PlannedItem[];
    const spec = pv?.object.spec as typeof pvObject.spec;
    const volumeId = spec.csi.volumeHandle;
    expect(volumeId).toMatch(/^vol-/);
    expect(spec.nodeAffinity.required.nodeSelectorTerms[0]?.matchExpressions[0]?.values).toEqual([
      `${DR_REGION}b`,
    ]);
    const seen = await new EC2Client(drConfig()).send(new DescribeVolumesCommand({ VolumeIds: [volumeId] }));
    expect(seen.Volumes?.[0]).toMatchObject({
      SnapshotId: copies[0]?.snapshotHandle,
      AvailabilityZone: `${DR_REGION}b`,
      Encrypted: true,
      KmsKeyId: drKeyArn,
    });
    const tags = Object.fromEntries((seen.Volumes?.[0]?.Tags ?? []).map((t) => [t.Key, t.Value]));
    expect(tags).toMatchObject({ 'velero.io/restore': run.name, 'velero.io/pv': 'pv-data' });
    const inSource = await new EC2Client(awsConfig({ region: DR_REGION })).send(
      new DescribeVolumesCommand({ Filters: [{ Name: 'tag:velero.io/restore', Values: [run.name] }] }),
    );
    expect(inSource.Volumes).toEqual([]);
  });
});
