import {
  CreateSnapshotCommand,
  CreateVolumeCommand,
  DescribeSnapshotsCommand,
  DescribeVolumesCommand,
} from '@aws-sdk/client-ec2';
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLocalRestore } from '../../../cli/local/restore-runtime.js';
import { snapshotBlocksFor } from '../../../shared/adapters/ebs-snapshot-blocks.js';
import { EbsSnapshotter } from '../../../shared/adapters/ebs-snapshotter.js';
import { KubernetesCluster } from '../../../shared/adapters/kubernetes-cluster.js';
import type { LocalDirectoryStore } from '../../../shared/adapters/local-directory-store.js';
import type { RepositoryLocation } from '../../../shared/contracts/data-mover-job.js';
import type { BackupDocument } from '../../../shared/domain/storage/backup-document.js';
import { backupKeys, repositoryKeys } from '../../../shared/domain/storage/keys.js';
import type { BackupVolumeInfo } from '../../../shared/domain/volumes/info.js';
import { installCsiSnapshotApi } from '../../fixtures/volume-snapshot-class-crd.js';
import { backup, backupRequest } from '../backup/support.js';
import {
  type CsiSnapshotController,
  createVeleroSnapshotClass,
  startCsiSnapshotController,
} from '../support/csi-snapshot-controller.js';
import { awsConfig, kubeConfigFor, testEnv, uniqueName, useDrCluster } from '../support/env.js';
import { hashOf, isZero, volumeHashes, volumeImage, writeSnapshot } from '../support/snapshot-image.js';
import {
  ec2,
  localDataMoverSetup,
  storedJson,
  useVolumeFixtures,
  VolumeFixtures,
} from '../support/volumes.js';
import { waitFor } from '../support/wait.js';

const group = 'snapshot.storage.k8s.io';
const version = 'v1';
const DRIVER = 'ebs.csi.aws.com';

describe('snapshotMoveData of a CSI-snapshotted EBS volume', () => {
  const drCluster = useDrCluster();
  // The restore's side: the source cluster (its fixtures removed after the file).
  const sourceFixtures = useVolumeFixtures();
  // The backup's side: the DR cluster.
  const fixtures = new VolumeFixtures();
  const image = volumeImage();
  const zone = () => `${awsConfig().region}a`;
  const className = uniqueName('vsclass-ebs');
  let drKc: KubeConfig;
  let custom: CustomObjectsApi;
  let controller: CsiSnapshotController;
  let store: LocalDirectoryStore;
  let repository: RepositoryLocation;
  let environment: Record<string, string>;
  const workload = { namespace: '', volumeId: '', pvName: '' };

  beforeAll(async () => {
    const env = testEnv();
    drKc = kubeConfigFor(drCluster());
    fixtures.connect(drKc);
    custom = drKc.makeApiClient(CustomObjectsApi);
    await installCsiSnapshotApi(drKc);
    await createVeleroSnapshotClass(drKc, { name: className, driver: DRIVER });
    controller = startCsiSnapshotController({ kc: drKc, ec2: ec2(), driver: DRIVER });

    ({ store, repository, environment } = await localDataMoverSetup());
    // The PVC's EBS volume holds the image: a seed snapshot written block by block, a volume from it.
    const source = snapshotBlocksFor({
      region: env.aws.region,
      endpoint: env.aws.endpoint,
      credentials: awsConfig().credentials,
    });
    const seed = await writeSnapshot(source, image);
    const made = await ec2().send(
      new CreateVolumeCommand({ SnapshotId: seed, AvailabilityZone: zone(), VolumeType: 'gp3' }),
    );
    workload.volumeId = made.VolumeId ?? '';
    fixtures.volumes.push(workload.volumeId);
    workload.namespace = await fixtures.namespace('csi-moved');
    workload.pvName =
      (await fixtures.claimWithVolume({
        namespace: workload.namespace,
        claim: 'data',
        zone: zone(),
        source: { csi: { driver: DRIVER, volumeHandle: workload.volumeId, fsType: 'ext4' } },
        pod: { name: 'db' },
      })) ?? '';
  }, 300_000);

  afterAll(async () => {
    await controller?.stop();
    await custom
      ?.deleteClusterCustomObject({ group, version, plural: 'volumesnapshotclasses', name: className })
      .catch(() => undefined);
    await fixtures.cleanUp();
  });

  it('moves the CSI snapshot’s data into the repository, removes the snapshot objects, and restores the volume into the other cluster block for block', async () => {
    const env = testEnv();
    const name = uniqueName('csi-moved');
    // Act: the backup, CSI snapshots through the cluster's own snapshot API (the runtime's default).
    const outcome = await backup({
      kc: drKc,
      store,
      request: backupRequest(name, { includedNamespaces: [workload.namespace], snapshotMoveData: true }),
      extra: {
        snapshotter: new EbsSnapshotter({ client: ec2() }),
        volumePollSeconds: 1,
        dataMover: { repository, region: env.aws.region, environment },
      },
    });
    expect(outcome).toMatchObject({ ok: true, output: { name, phase: 'Completed', errors: 0 } });
    expect(controller.errors).toEqual([]);

    // Assess: the CSI snapshot the controller took, its data moved under a manifest of the repository.
    expect(controller.bound).toHaveLength(1);
    const keys = backupKeys(name);
    const infos = await storedJson<BackupVolumeInfo[]>(store, keys.volumeInfo);
    expect(infos).toHaveLength(1);
    const info = infos[0];
    expect(info).toMatchObject({
      pvcName: 'data',
      pvcNamespace: workload.namespace,
      pvName: workload.pvName,
      backupMethod: 'CSISnapshot',
      snapshotDataMoved: true,
      skipped: false,
      result: 'succeeded',
      csiSnapshotInfo: { driver: DRIVER, snapshotHandle: expect.stringMatching(/^snap-/) },
      snapshotDataMovementInfo: {
        dataMover: 'lifeboat',
        uploaderType: 'lifeboat-block',
        Phase: 'Completed',
      },
    });
    const csiHandle = String(info?.csiSnapshotInfo?.snapshotHandle);
    const manifestId = String(info?.snapshotDataMovementInfo?.snapshotHandle);
    expect(manifestId).toMatch(new RegExp(`^${name}_`));
    expect(await store.exists(repositoryKeys.snapshot(manifestId))).toBe(true);
    const operations = await storedJson<{ spec: Record<string, unknown>; status: Record<string, unknown> }[]>(
      store,
      keys.itemOperations,
    );
    expect(
      operations.find((o) => o.spec.backupItemAction === 'lifeboat.io/data-mover')?.status,
    ).toMatchObject({ phase: 'Completed' });
    const document = await storedJson<BackupDocument>(store, keys.metadata);
    expect(document.status).toMatchObject({
      phase: 'Completed',
      csiVolumeSnapshotsAttempted: 1,
      csiVolumeSnapshotsCompleted: 1,
    });
    // Velero leaves the count out when there are none.
    expect(document.status?.errors).toBeUndefined();

    // The VolumeSnapshot and its content are gone from the cluster once the backup is done.
    const left = (await custom.listNamespacedCustomObject({
      group,
      version,
      namespace: workload.namespace,
      plural: 'volumesnapshots',
    })) as { items?: unknown[] };
    expect(left.items ?? []).toEqual([]);
    const boundContent = `snapcontent-${String((controller.bound[0]?.metadata as { uid?: string })?.uid)}`;
    await waitFor(`VolumeSnapshotContent ${boundContent} to go`, async () =>
      (await custom
        .getClusterCustomObject({ group, version, plural: 'volumesnapshotcontents', name: boundContent })
        .then(() => false)
        .catch(() => true))
        ? true
        : undefined,
    );
    // Its EBS snapshot stays (the content was set to Retain first) as the volume's incremental base.
    expect(info?.snapshotDataMovementInfo?.retainedSnapshot).toBe(csiHandle);
    expect(controller.deleted).toEqual([
      expect.objectContaining({
        snapshotHandle: csiHandle,
        deletionPolicy: 'Retain',
        snapshotDeleted: false,
      }),
    ]);
    const kept = await ec2().send(new DescribeSnapshotsCommand({ SnapshotIds: [csiHandle] }));
    expect(kept.Snapshots?.[0]).toMatchObject({ SnapshotId: csiHandle, VolumeId: workload.volumeId });

    // Act: restore from the repository into the source cluster, under another namespace.
    const sourceKc = kubeConfigFor(env.clusters.source);
    const target = uniqueName('csi-restored');
    sourceFixtures.namespaces.push(target);
    const restored = await runLocalRestore(
      {
        cluster: 'source',
        restore: {
          metadata: { name: uniqueName('csi-moved') },
          spec: { backupName: name, namespaceMapping: { [workload.namespace]: target } },
        },
      },
      {
        cluster: new KubernetesCluster(sourceKc),
        store,
        dataMover: { repository, region: env.aws.region, environment },
        volumeStep: { pollWithinMs: 5_000, pollIntervalMs: 200, bindTimeoutMs: 60_000 },
      },
    );
    expect(restored).toMatchObject({ phase: 'Completed', failed: 0, errors: 0 });

    // Assess: the PVC bound to a new EBS volume whose blocks are the image's.
    const { pv, volumeId } = await sourceFixtures.boundVolume({ namespace: target, claim: 'data' });
    expect(pv.spec?.csi?.driver).toBe(DRIVER);
    expect(volumeId).toMatch(/^vol-/);
    expect(volumeId).not.toBe(workload.volumeId);
    const volume = (await ec2().send(new DescribeVolumesCommand({ VolumeIds: [volumeId] }))).Volumes?.[0];
    expect(volume?.AvailabilityZone).toBe(zone());
    const check = await ec2().send(new CreateSnapshotCommand({ VolumeId: volumeId }));
    const blocks = snapshotBlocksFor({
      region: env.aws.region,
      endpoint: env.aws.endpoint,
      credentials: awsConfig().credentials,
    });
    const expected = new Map(
      [...image].filter(([, data]) => !isZero(data)).map(([index, data]) => [index, hashOf(data)]),
    );
    expect(await volumeHashes(blocks, check.SnapshotId ?? '')).toEqual(expected);
  }, 600_000);
});
