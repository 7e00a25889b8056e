import { gunzipSync } from 'node:zlib';
import {
  CreateSnapshotCommand,
  CreateVolumeCommand,
  DescribeSnapshotsCommand,
  DescribeVolumesCommand,
  EC2Client,
  type Volume,
} from '@aws-sdk/client-ec2';
import { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { CoreV1Api, type V1PersistentVolume } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectGarbage } from '../../../cli/local/local-data-mover.js';
import { runLocalRestore } from '../../../cli/local/restore-runtime.js';
import { deleteBackup } from '../../../functions/delete-backup/delete-backup.js';
import { assumedRoleCredentials, snapshotBlocksFor } from '../../../shared/adapters/ebs-snapshot-blocks.js';
import { EbsSnapshotter } from '../../../shared/adapters/ebs-snapshotter.js';
import { KubernetesCluster } from '../../../shared/adapters/kubernetes-cluster.js';
import type { LocalDirectoryStore } from '../../../shared/adapters/local-directory-store.js';
import type { RepositoryLocation } from '../../../shared/contracts/data-mover-job.js';
import type { BackupDocument } from '../../../shared/domain/storage/backup-document.js';
import { backupKeys, repositoryKeys, restoreKeys } from '../../../shared/domain/storage/keys.js';
import type { BackupVolumeInfo, RestoreVolumeInfo } from '../../../shared/domain/volumes/info.js';
import type { SnapshotBlocks } from '../../../shared/ports/snapshot-blocks.js';
import { backup, backupRequest } from '../backup/support.js';
import { awsConfig, kubeConfigFor, testEnv, uniqueName, useDrCluster } from '../support/env.js';
import {
  hashOf,
  isZero,
  VOLUME_GIB,
  volumeHashes,
  volumeImage,
  writeSnapshot,
} from '../support/snapshot-image.js';
import { ec2, localDataMoverSetup, storedJson, useVolumeFixtures } from '../support/volumes.js';
import { waitFor } from '../support/wait.js';

type Image = ReadonlyMap<number, Uint8Array>;

/** SHA-256 of every non-zero block of an image, by index: what a restored volume must read back. */
const hashesOf = (image: Image): Map<number, string> =>
  new Map([...image].filter(([, data]) => !isZero(data)).map(([index, data]) => [index, hashOf(data)]));

/**
 * The image with every block from `from` on rewritten (a marker over its first bytes), the
 * blocks before it unchanged: two volumes that share half their data.
 */
function halfRewritten(image: Image, from: number): Map<number, Uint8Array> {
  return new Map(
    [...image].map(([index, data]) => {
      if (index < from || isZero(data)) return [index, data];
      const copy = Uint8Array.from(data);
      copy.set(new TextEncoder().encode(`rewritten block ${index} `));
      return [index, copy];
    }),
  );
}

/** A metav1.Time as Velero writes it. */
const kubeTime = (at: Date | undefined): string =>
  (at ?? new Date(0)).toISOString().replace(/\.\d{3}Z$/, 'Z');

describe('volume data through the data mover: backup, restore anywhere, delete', () => {
  const fixtures = useVolumeFixtures();
  const drCluster = useDrCluster();
  const imageA = volumeImage();
  const imageB = halfRewritten(imageA, 150 * 34);
  const zone = () => `${awsConfig().region}a`;
  let store: LocalDirectoryStore;
  let repository: RepositoryLocation;
  let environment: Record<string, string>;
  let source: SnapshotBlocks;
  const drNamespaces: string[] = [];
  const drPvs: string[] = [];
  /** The namespaces and volumes of the two backed-up volumes, and the backups. */
  const a = { namespace: '', volumeId: '', pvName: '', backup: uniqueName('moved-a') };
  const b = { namespace: '', volumeId: '', pvName: '', backup: uniqueName('moved-b') };

  beforeAll(async () => {
    const env = testEnv();
    ({ store, repository, environment } = await localDataMoverSetup());
    const config = awsConfig();
    source = snapshotBlocksFor({
      region: env.aws.region,
      endpoint: env.aws.endpoint,
      credentials: config.credentials,
    });
    // Each PVC's EBS volume holds its image: a seed snapshot written block by block, and a volume from it.
    const seeded = async (image: Image, into: typeof a, claim: string): Promise<void> => {
      const seed = await writeSnapshot(source, image);
      const made = await ec2().send(
        new CreateVolumeCommand({ SnapshotId: seed, AvailabilityZone: zone(), VolumeType: 'gp3' }),
      );
      into.volumeId = made.VolumeId ?? '';
      fixtures.volumes.push(into.volumeId);
      into.namespace = await fixtures.namespace(claim);
      into.pvName =
        (await fixtures.claimWithVolume({
          namespace: into.namespace,
          claim: 'data',
          zone: zone(),
          source: { csi: { driver: 'ebs.csi.aws.com', volumeHandle: into.volumeId, fsType: 'ext4' } },
          pod: { name: 'db' },
        })) ?? '';
    };
    await seeded(imageA, a, 'moved-a');
    await seeded(imageB, b, 'moved-b');
  }, 300_000);

  afterAll(async () => {
    const api = kubeConfigFor(drCluster()).makeApiClient(CoreV1Api);
    for (const name of drNamespaces) await api.deleteNamespace({ name }).catch(() => undefined);
    for (const name of drPvs) await api.deletePersistentVolume({ name }).catch(() => undefined);
  });

  const backUp = async (options: { name: string; namespace: string }) =>
    backup({
      kc: fixtures.kc,
      store,
      request: backupRequest(options.name, {
        includedNamespaces: [options.namespace],
        snapshotMoveData: true,
      }),
      extra: {
        snapshotter: new EbsSnapshotter({ client: ec2() }),
        // The ebs.csi.aws.com PV is snapshotted natively, through EC2.
        csiSnapshots: false,
        volumePollSeconds: 1,
        dataMover: { repository, region: awsConfig().region, environment },
      },
    });

  /** The EBS snapshot a backup took of a volume, as EC2 has it. */
  const snapshotOf = async (backupName: string) => {
    const found = await new EbsSnapshotter({ client: ec2() }).findSnapshots({
      tags: [{ key: 'velero.io/backup', value: backupName }],
    });
    expect(found).toHaveLength(1);
    return found[0] as NonNullable<(typeof found)[number]>;
  };

  it('moves a snapshotMoveData volume into the repository and restores it into the DR cluster, account and region', async () => {
    const env = testEnv();
    // Act: the backup.
    const outcome = await backUp({ name: a.backup, namespace: a.namespace });
    expect(outcome).toMatchObject({
      ok: true,
      output: { name: a.backup, phase: 'Completed', errors: 0, warnings: 0 },
    });

    // Assess: the snapshot, kept as the volume's incremental base, and the manifest in the repository.
    const snapshot = await snapshotOf(a.backup);
    expect(snapshot).toMatchObject({ volumeId: a.volumeId, state: 'completed' });
    const keys = backupKeys(a.backup);
    const operations = await storedJson<{ spec: Record<string, unknown>; status: Record<string, unknown> }[]>(
      store,
      keys.itemOperations,
    );
    const movedOperation = operations.find((o) => o.spec.backupItemAction === 'lifeboat.io/data-mover');
    const manifestId = String(movedOperation?.spec.OperationID);
    expect(manifestId).toMatch(new RegExp(`^${a.backup}_${a.volumeId}_\\d{8}T\\d{6}Z$`));
    expect(await store.exists(repositoryKeys.snapshot(manifestId))).toBe(true);
    expect(movedOperation).toEqual({
      spec: {
        backupName: a.backup,
        backupUID: expect.any(String),
        backupItemAction: 'lifeboat.io/data-mover',
        ResourceIdentifier: {
          Group: '',
          Resource: 'persistentvolumeclaims',
          Namespace: a.namespace,
          Name: 'data',
        },
        OperationID: manifestId,
        PostOperationItems: null,
      },
      status: {
        phase: 'Completed',
        nCompleted: expect.any(Number),
        nTotal: VOLUME_GIB * 1024 ** 3,
        operationUnits: 'Bytes',
        description: 'Completed',
        created: expect.any(String),
        started: expect.any(String),
        updated: expect.any(String),
      },
    });
    const completedAt = String(movedOperation?.status.updated);
    const infos = await storedJson<BackupVolumeInfo[]>(store, keys.volumeInfo);
    expect(infos).toEqual([
      {
        pvcName: 'data',
        pvcNamespace: a.namespace,
        pvName: a.pvName,
        backupMethod: 'NativeSnapshot',
        snapshotDataMoved: true,
        preserveLocalSnapshot: false,
        skipped: false,
        startTimestamp: kubeTime(snapshot.startTime),
        completionTimestamp: completedAt,
        result: 'succeeded',
        snapshotDataMovementInfo: {
          dataMover: 'lifeboat',
          uploaderType: 'lifeboat-block',
          retainedSnapshot: snapshot.snapshotId,
          snapshotHandle: manifestId,
          operationID: manifestId,
          size: VOLUME_GIB * 1024 ** 3,
          Phase: 'Completed',
        },
        nativeSnapshotInfo: {
          snapshotHandle: snapshot.snapshotId,
          volumeType: 'gp3',
          volumeAZ: zone(),
          iops: '0',
          Phase: 'Completed',
        },
        pvInfo: { reclaimPolicy: 'Retain', labels: { app: 'db', 'topology.kubernetes.io/zone': zone() } },
      },
    ]);
    const document = await storedJson<BackupDocument>(store, keys.metadata);
    expect(document.status).toMatchObject({
      phase: 'Completed',
      volumeSnapshotsAttempted: 1,
      volumeSnapshotsCompleted: 1,
      backupItemOperationsAttempted: 2,
      backupItemOperationsCompleted: 2,
    });

    // Act: restore into the DR cluster, through the DR account's role, in us-west-2, with its key.
    const drRegion = 'us-west-2';
    const drCredentials = assumedRoleCredentials({
      region: drRegion,
      endpoint: env.aws.endpoint,
      credentials: awsConfig().credentials,
      roleArn: `arn:aws:iam::${env.aws.accounts.dr}:role/lifeboat-restore`,
      externalId: 'lifeboat-dr',
    });
    const drConfig = { region: drRegion, endpoint: env.aws.endpoint, credentials: drCredentials };
    const key = await new KMSClient(drConfig).send(new CreateKeyCommand({ Description: 'DR volumes' }));
    const kmsKeyArn = key.KeyMetadata?.Arn ?? '';
    expect(kmsKeyArn).toContain(`:kms:${drRegion}:${env.aws.accounts.dr}:`);
    const drKc = kubeConfigFor(drCluster());
    drNamespaces.push(a.namespace);
    drPvs.push(a.pvName);
    const restoreName = uniqueName('dr');
    const restored = await runLocalRestore(
      {
        cluster: 'dr',
        restore: {
          metadata: { name: restoreName },
          spec: {
            backupName: a.backup,
            volumeRegion: drRegion,
            volumeAvailabilityZone: `${drRegion}a`,
            volumeAccountRoleArn: `arn:aws:iam::${env.aws.accounts.dr}:role/lifeboat-restore`,
            volumeAccountExternalId: 'lifeboat-dr',
            volumeKmsKeyId: kmsKeyArn,
          },
        },
      },
      {
        cluster: new KubernetesCluster(drKc),
        store,
        dataMover: { repository, region: env.aws.region, environment },
        volumeStep: { pollWithinMs: 5_000, pollIntervalMs: 200, bindTimeoutMs: 60_000 },
      },
    );
    expect(restored).toMatchObject({ phase: 'Completed', failed: 0, errors: 0 });

    // Assess: the PV in the DR cluster points at a volume of the DR account, bound to its PVC.
    const drApi = drKc.makeApiClient(CoreV1Api);
    const pv: V1PersistentVolume = await waitFor(`PV ${a.pvName} in the DR cluster to bind`, async () => {
      const found = await drApi.readPersistentVolume({ name: a.pvName });
      return found.status?.phase === 'Bound' ? found : undefined;
    });
    expect(pv.spec?.claimRef).toMatchObject({ namespace: a.namespace, name: 'data' });
    expect(pv.metadata?.labels?.['topology.kubernetes.io/zone']).toBe(`${drRegion}a`);
    const volumeId = pv.spec?.csi?.volumeHandle ?? '';
    expect(volumeId).toMatch(/^vol-/);
    expect(volumeId).not.toBe(a.volumeId);
    const drEc2 = new EC2Client(drConfig);
    const volume: Volume =
      (await drEc2.send(new DescribeVolumesCommand({ VolumeIds: [volumeId] }))).Volumes?.[0] ?? {};
    expect(volume).toMatchObject({
      AvailabilityZone: `${drRegion}a`,
      VolumeType: 'gp3',
      Size: VOLUME_GIB,
      Encrypted: true,
      KmsKeyId: kmsKeyArn,
    });
    expect(Object.fromEntries((volume.Tags ?? []).map((t) => [t.Key, t.Value]))).toMatchObject({
      'velero.io/restore': restoreName,
      'velero.io/pvc-namespace': a.namespace,
      'velero.io/pvc-name': 'data',
    });
    const written = (
      await drEc2.send(new DescribeSnapshotsCommand({ SnapshotIds: [volume.SnapshotId ?? ''] }))
    ).Snapshots?.[0];
    expect(written).toMatchObject({ State: 'completed', OwnerId: env.aws.accounts.dr, KmsKeyId: kmsKeyArn });
    // Not a volume of the source account, nor of its region.
    await expect(
      new EC2Client({ ...awsConfig(), region: drRegion }).send(
        new DescribeVolumesCommand({ VolumeIds: [volumeId] }),
      ),
    ).rejects.toThrow();
    // The restored volume's blocks are the image's, block for block.
    const check = await drEc2.send(new CreateSnapshotCommand({ VolumeId: volumeId }));
    const drBlocks = snapshotBlocksFor({ ...drConfig });
    expect(await volumeHashes(drBlocks, check.SnapshotId ?? '')).toEqual(hashesOf(imageA));

    const restoreInfos = await storedJson<RestoreVolumeInfo[]>(store, restoreKeys(restoreName).volumeInfo);
    expect(restoreInfos).toEqual([
      {
        pvName: a.pvName,
        pvcName: 'data',
        pvcNamespace: a.namespace,
        restoreMethod: 'NativeSnapshot',
        snapshotDataMoved: true,
        snapshotDataMovementInfo: infos[0]?.snapshotDataMovementInfo,
      },
    ]);
  }, 600_000);

  it('after deleting one of two backups and collecting garbage, reports the freed bytes and still restores the other block for block', async () => {
    // Prepare: the second backup, of a volume sharing the first half of the first one's blocks.
    expect(await backUp({ name: b.backup, namespace: b.namespace })).toMatchObject({
      ok: true,
      output: { phase: 'Completed', errors: 0 },
    });
    const snapshotA = await snapshotOf(a.backup);

    // Act: delete the first backup; the repository's garbage collection runs after.
    const deleted = await deleteBackup(
      { name: a.backup },
      {
        store,
        snapshotter: new EbsSnapshotter({ client: ec2() }),
        collectGarbage: () => collectGarbage({ repository, environment }),
      },
    );

    // Assess: its snapshot, manifest and objects are gone; the freed bytes are reported.
    expect(deleted).toMatchObject({
      name: a.backup,
      found: true,
      deleted: true,
      snapshotsDeleted: [snapshotA.snapshotId],
      manifestsDeleted: [expect.stringMatching(new RegExp(`^${a.backup}_${a.volumeId}_`))],
      errors: [],
    });
    expect(deleted.objectsDeleted).toBeGreaterThan(5);
    expect(deleted.gc?.liveManifests).toBe(1);
    expect(deleted.gc?.packsDeleted).toBeGreaterThan(0);
    expect(deleted.gc?.bytesFreed).toBeGreaterThan(0);
    console.log(
      `[data-movement] deleting ${a.backup}: ${deleted.gc?.packsDeleted} packs, ${deleted.gc?.bytesFreed} bytes freed; ${deleted.gc?.packsKept} packs kept`,
    );
    expect(await store.list(backupKeys(a.backup).dir)).toEqual([]);
    expect(await store.exists(backupKeys(a.backup).claim)).toBe(false);
    await expect(
      ec2().send(new DescribeSnapshotsCommand({ SnapshotIds: [snapshotA.snapshotId] })),
    ).rejects.toThrow();
    // A second run finds nothing left.
    expect(await deleteBackup({ name: a.backup }, { store })).toMatchObject({ found: false });

    // Act: restore the other backup into the source cluster, under a new namespace.
    const target = await fixtures.namespace('moved-b-to');
    const restoreName = uniqueName('after-gc');
    const restored = await runLocalRestore(
      {
        cluster: 'source',
        restore: {
          metadata: { name: restoreName },
          spec: { backupName: b.backup, namespaceMapping: { [b.namespace]: target } },
        },
      },
      {
        cluster: new KubernetesCluster(fixtures.kc),
        store,
        dataMover: { repository, region: awsConfig().region, environment },
        volumeStep: { pollWithinMs: 5_000, pollIntervalMs: 200, bindTimeoutMs: 60_000 },
      },
    );
    expect(restored).toMatchObject({ phase: 'Completed', failed: 0, errors: 0 });

    // Assess: the PVC binds to a renamed PV on a new volume whose blocks are the second image's.
    const { pvName: clone, volumeId } = await fixtures.boundVolume({ namespace: target, claim: 'data' });
    expect(clone).toMatch(/^velero-clone-/);
    expect(volumeId).toMatch(/^vol-/);
    expect(volumeId).not.toBe(b.volumeId);
    const check = await ec2().send(new CreateSnapshotCommand({ VolumeId: volumeId }));
    expect(await volumeHashes(source, check.SnapshotId ?? '')).toEqual(hashesOf(imageB));
  }, 600_000);

  it('makes a later backup of the same volume incremental, and deletes the base the earlier one kept', async () => {
    const earlier = await snapshotOf(b.backup);
    const name = uniqueName('moved-b-again');
    expect(await backUp({ name, namespace: b.namespace })).toMatchObject({
      ok: true,
      output: { phase: 'Completed', errors: 0, warnings: 0 },
    });
    const [info] = await storedJson<BackupVolumeInfo[]>(store, backupKeys(name).volumeInfo);
    expect(info).toMatchObject({ snapshotDataMoved: true, result: 'succeeded' });
    const log = gunzipSync((await store.get(backupKeys(name).logs)) ?? new Uint8Array()).toString('utf8');
    const moved = log.split('\n').find((line) => line.includes('msg="Moved snapshot'));
    // Against the second backup's manifest; the volume did not change, so no block was read.
    const parent = / parent=(\S+)/.exec(moved ?? '')?.[1] ?? '';
    expect(parent).toMatch(new RegExp(`^${b.backup}_${b.volumeId}_\\d{8}T\\d{6}Z$`));
    expect(moved).toContain(' incremental=true');
    expect(moved).toContain(' bytesRead=0 ');
    expect(log).toContain(
      `msg="Deleted snapshot ${earlier.snapshotId}, the incremental base of manifest ${parent}: ${info?.snapshotDataMovementInfo?.retainedSnapshot} is the volume's base now"`,
    );
    await expect(
      ec2().send(new DescribeSnapshotsCommand({ SnapshotIds: [earlier.snapshotId] })),
    ).rejects.toThrow();
  }, 600_000);
});
