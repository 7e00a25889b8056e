/**
 * The data mover in the deployment rehearsal: a backup with snapshotMoveData of a claim bound to
 * an EBS volume, run by the stack's backup workflow, snapshots the volume natively and starts the
 * Fargate data-mover task of the synthesized assembly (its image's entry, its task role, its
 * container environment), which reads the snapshot through the EBS direct APIs into the
 * repository; volumes-info records the movement. Every AWS call is allowed by its caller's role
 * in the template. (The restore half is not here yet.)
 */
import { gunzipSync } from 'node:zlib';
import { CreateVolumeCommand, EC2Client } from '@aws-sdk/client-ec2';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { snapshotBlocksFor } from '../../shared/adapters/ebs-snapshot-blocks.js';
import { backupKeys } from '../../shared/domain/storage/keys.js';
import type { BackupVolumeInfo } from '../../shared/domain/volumes/info.js';
import type { SnapshotBlocks } from '../../shared/ports/snapshot-blocks.js';
import { testEnv, uniqueName } from '../integration/support/env.js';
import { volumeImage, writeSnapshot } from '../integration/support/snapshot-image.js';
import { waitFor } from '../integration/support/wait.js';
import { type Rehearsal, startRehearsal } from './rehearsal.js';
import { namespaceForPods, ZONE } from './sample.js';

const LONG = 600_000;
const credentials = { accessKeyId: 'testing', secretAccessKey: 'testing' };

describe('the deployment rehearsal of the data mover: snapshotMoveData backed up', () => {
  let rehearsal: Rehearsal;
  let blocks: SnapshotBlocks;
  let ec2: EC2Client;
  let namespace: string;
  let volumeId: string;
  const backupName = uniqueName('moved');
  const image = volumeImage();

  async function storedJson<T>(key: string): Promise<T> {
    const env = testEnv();
    const s3 = new S3Client({
      endpoint: env.aws.endpoint,
      region: env.aws.region,
      forcePathStyle: true,
      credentials,
    });
    const stored = await s3.send(new GetObjectCommand({ Bucket: rehearsal.bucket, Key: key }));
    return JSON.parse(
      gunzipSync((await stored.Body?.transformToByteArray()) ?? new Uint8Array()).toString('utf8'),
    ) as T;
  }

  /** A claim bound to an EBS volume made from a snapshot holding the image's blocks. */
  async function claimOnSeededVolume(core: CoreV1Api): Promise<void> {
    const seed = await writeSnapshot(blocks, image);
    const made = await ec2.send(
      new CreateVolumeCommand({ SnapshotId: seed, AvailabilityZone: ZONE, VolumeType: 'gp3' }),
    );
    volumeId = made.VolumeId ?? '';
    const pvName = `pv-${backupName}`;
    await core.createPersistentVolume({
      body: {
        metadata: { name: pvName, labels: { 'topology.kubernetes.io/zone': ZONE } },
        spec: {
          capacity: { storage: '5Gi' },
          accessModes: ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Retain',
          storageClassName: '',
          claimRef: { namespace, name: 'data' },
          csi: { driver: 'ebs.csi.aws.com', volumeHandle: volumeId, fsType: 'ext4' },
        },
      },
    });
    await core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: 'data' },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName: '',
          volumeName: pvName,
          resources: { requests: { storage: '5Gi' } },
        },
      },
    });
    await waitFor('the claim to bind', async () =>
      (await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'data' })).status?.phase === 'Bound'
        ? true
        : undefined,
    );
  }

  beforeAll(async () => {
    const env = testEnv();
    rehearsal = await startRehearsal({ tools: env.tools, aws: env.aws });
    blocks = snapshotBlocksFor({ region: env.aws.region, endpoint: env.aws.endpoint, credentials });
    ec2 = new EC2Client({ endpoint: env.aws.endpoint, region: env.aws.region, credentials });
    const core = rehearsal.kubeConfig.makeApiClient(CoreV1Api);
    namespace = await namespaceForPods(core, 'moved');
    await claimOnSeededVolume(core);
  }, LONG);
  afterAll(async () => {
    await rehearsal?.stop();
  });

  it('backs up with snapshotMoveData: the Fargate data mover from the assembly moves the snapshot into the repository', {
    timeout: LONG,
  }, async () => {
    const tasksBefore = rehearsal.report().usage.fargate.tasks;
    const outcome = await rehearsal.start('backup', {
      request: {
        cluster: 'rehearsal',
        backup: {
          apiVersion: 'velero.io/v1',
          kind: 'Backup',
          metadata: { name: backupName },
          spec: { includedNamespaces: [namespace], snapshotVolumes: true, snapshotMoveData: true },
        },
      },
    });
    expect(outcome).toMatchObject({
      status: 'SUCCEEDED',
      output: { name: backupName, phase: 'Completed', errors: 0 },
    });
    expect(rehearsal.report().usage.fargate.tasks).toBeGreaterThan(tasksBefore);
    const infos = await storedJson<BackupVolumeInfo[]>(backupKeys(backupName).volumeInfo);
    expect(infos).toHaveLength(1);
    expect(infos[0]).toMatchObject({
      pvcName: 'data',
      pvcNamespace: namespace,
      snapshotDataMoved: true,
      result: 'succeeded',
      snapshotDataMovementInfo: { dataMover: 'lifeboat', uploaderType: 'lifeboat-block', Phase: 'Completed' },
    });
    expect(String(infos[0]?.snapshotDataMovementInfo?.snapshotHandle)).toMatch(new RegExp(`^${backupName}_`));
    expect(rehearsal.report().violations).toEqual([]);
  });
});
