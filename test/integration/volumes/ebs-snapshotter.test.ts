/**
 * The EBS snapshotter against the AWS emulator: snapshot a volume with Velero's tags, poll it to
 * completion, re-create it in another zone, delete the snapshot (twice: the second is a no-op).
 */
import {
  CreateVolumeCommand,
  DeleteVolumeCommand,
  DescribeVolumesCommand,
  EC2Client,
} from '@aws-sdk/client-ec2';
import { afterAll, describe, expect, it } from 'vitest';
import { EbsSnapshotter } from '../../../shared/adapters/ebs-snapshotter.js';
import { CloudRequestRefused, RetryableError } from '../../../shared/domain/errors.js';
import { snapshotTags } from '../../../shared/domain/volumes/ebs-volume.js';
import type { SnapshotProgress } from '../../../shared/ports/snapshotter.js';
import { awsConfig, uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';

const created: string[] = [];
const client = (): EC2Client => new EC2Client({ ...awsConfig(), maxAttempts: 3 });

async function createVolume(ec2: EC2Client, options: { zone: string }): Promise<string> {
  const volume = await ec2.send(
    new CreateVolumeCommand({
      AvailabilityZone: options.zone,
      Size: 8,
      VolumeType: 'io1',
      Iops: 400,
      TagSpecifications: [
        {
          ResourceType: 'volume',
          Tags: [
            { Key: 'Name', Value: 'db-data' },
            { Key: 'velero.io/backup', Value: 'an-older-backup' },
            { Key: 'kubernetes.io/cluster/source', Value: 'owned' },
          ],
        },
      ],
    }),
  );
  const id = volume.VolumeId ?? '';
  created.push(id);
  return id;
}

afterAll(async () => {
  const ec2 = client();
  for (const id of created) await ec2.send(new DeleteVolumeCommand({ VolumeId: id })).catch(() => undefined);
});

describe('EBS snapshotter', () => {
  it('snapshots a volume with Velero tags, waits for it, restores it in another zone and deletes it once', async () => {
    const ec2 = client();
    const snapshotter = new EbsSnapshotter({ client: ec2 });
    const region = awsConfig().region;
    const backupName = uniqueName('nightly');
    const volumeId = await createVolume(ec2, { zone: `${region}a` });

    // Describe: type, IOPS (io1), zone and tags, as GetVolumeInfo and CreateSnapshot read them.
    const volume = await snapshotter.describeVolume(volumeId);
    expect(volume).toMatchObject({
      volumeId,
      volumeType: 'io1',
      iops: 400,
      availabilityZone: `${region}a`,
      sizeGiB: 8,
    });
    expect(volume.tags).toContainEqual({ key: 'Name', value: 'db-data' });

    const { tags, dropped } = snapshotTags({
      backupName,
      backupLabels: { team: 'data' },
      pvName: 'pv-db',
      volumeTags: volume.tags,
    });
    expect(dropped).toEqual([]);
    const { snapshotId } = await snapshotter.createSnapshot({
      volumeId,
      tags,
      description: `lifeboat ${backupName}`,
    });
    expect(snapshotId).toMatch(/^snap-/);

    // Lifeboat waits: poll until completed (or error), keeping what was seen.
    const seen: SnapshotProgress[] = [];
    const done = await waitFor('the snapshot to complete', async () => {
      const progress = await snapshotter.snapshotProgress(snapshotId);
      seen.push(progress);
      return progress.state === 'completed' || progress.state === 'error' ? progress : undefined;
    });
    expect(done).toMatchObject({ snapshotId, state: 'completed', volumeId, encrypted: false });
    expect(done.percent === undefined || done.percent === 100).toBe(true);
    const snapshotTagMap = Object.fromEntries(done.tags.map((t) => [t.key, t.value]));
    expect(snapshotTagMap).toMatchObject({
      team: 'data',
      'velero.io/backup': backupName,
      'velero.io/pv': 'pv-db',
      Name: 'db-data',
      'kubernetes.io/cluster/source': 'owned',
    });

    // A retried step finds the snapshot by its Velero tags instead of taking another one.
    const found = await snapshotter.findSnapshots({
      tags: [
        { key: 'velero.io/backup', value: backupName },
        { key: 'velero.io/pv', value: 'pv-db' },
      ],
    });
    expect(found.map((s) => s.snapshotId)).toEqual([snapshotId]);

    // Restore into another zone, as the DR cluster's ownership, with the recorded type and IOPS.
    const restored = await snapshotter.createVolumeFromSnapshot({
      snapshotId,
      availabilityZone: `${region}b`,
      volumeType: 'io1',
      iops: 400,
      clusterName: 'dr',
    });
    created.push(restored.volumeId);
    const described = (await ec2.send(new DescribeVolumesCommand({ VolumeIds: [restored.volumeId] })))
      .Volumes?.[0];
    expect(described).toMatchObject({
      AvailabilityZone: `${region}b`,
      SnapshotId: snapshotId,
      VolumeType: 'io1',
      Iops: 400,
      Encrypted: false,
    });
    const restoredTags = Object.fromEntries((described?.Tags ?? []).map((t) => [t.Key, t.Value]));
    expect(restoredTags).toMatchObject({
      'velero.io/backup': backupName,
      'kubernetes.io/cluster/dr': 'owned',
      KubernetesCluster: 'dr',
    });
    expect(restoredTags['kubernetes.io/cluster/source']).toBeUndefined();

    // Delete twice: the second finds nothing and is not an error.
    await snapshotter.deleteSnapshot(snapshotId);
    await snapshotter.deleteSnapshot(snapshotId);
    await expect(snapshotter.snapshotProgress(snapshotId)).rejects.toBeInstanceOf(RetryableError);
  });

  it('encrypts a restored volume with the given KMS key', async () => {
    const ec2 = client();
    const snapshotter = new EbsSnapshotter({ client: ec2 });
    const region = awsConfig().region;
    const volumeId = await createVolume(ec2, { zone: `${region}a` });
    const { snapshotId } = await snapshotter.createSnapshot({
      volumeId,
      tags: [{ key: 'velero.io/backup', value: 'kms' }],
    });
    const kmsKeyId = 'arn:aws:kms:us-east-1:123456789012:key/11111111-2222-3333-4444-555555555555';
    const restored = await snapshotter.createVolumeFromSnapshot({
      snapshotId,
      availabilityZone: `${region}c`,
      kmsKeyId,
    });
    created.push(restored.volumeId);
    const described = (await ec2.send(new DescribeVolumesCommand({ VolumeIds: [restored.volumeId] })))
      .Volumes?.[0];
    expect(described).toMatchObject({ Encrypted: true, KmsKeyId: kmsKeyId, AvailabilityZone: `${region}c` });
    await snapshotter.deleteSnapshot(snapshotId);
  });

  it('refuses a volume that does not exist, terminally, with its EC2 code', async () => {
    const snapshotter = new EbsSnapshotter({ client: client() });
    const error = await snapshotter.describeVolume('vol-0123456789abcdef0').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CloudRequestRefused);
    expect(error).toMatchObject({ code: 'InvalidVolume.NotFound', retryable: false });
  });
});
