/**
 * Native EBS snapshots over EC2 (velero-plugin-for-aws `volume_snapshotter.go`): describe a
 * volume, snapshot it with Velero's tags, poll the snapshot, re-create a volume from it in a
 * zone (found again by its restore tags, polled until available), delete it. The SDK client retries throttling and 5xx itself (build it with
 * `maxAttempts`, as aws-adapters does); what still fails is mapped to RetryableError (throttling,
 * 5xx, network: the step may be retried) or CloudRequestRefused (repeating will not help).
 * Never logs: callers log at the handler.
 */
import {
  CreateSnapshotCommand,
  type CreateSnapshotCommandOutput,
  CreateVolumeCommand,
  type CreateVolumeCommandOutput,
  DeleteSnapshotCommand,
  DescribeSnapshotsCommand,
  type DescribeSnapshotsCommandOutput,
  DescribeVolumesCommand,
  type DescribeVolumesCommandOutput,
  EC2Client,
  EC2ServiceException,
  type Tag as Ec2Tag,
  type Snapshot,
  type Volume,
  type VolumeType,
} from '@aws-sdk/client-ec2';
import { CloudRequestRefused, RetryableError } from '../domain/errors.js';
import { restoredVolumeTags, type Tag } from '../domain/volumes/ebs-volume.js';
import type {
  SnapshotProgress,
  SnapshotState,
  Snapshotter,
  VolumeDescription,
  VolumeState,
  VolumeStatus,
} from '../ports/snapshotter.js';
import { awsErrorOf } from './aws-errors.js';

/** Volume types whose provisioned IOPS Velero records and restores (plugin iopsVolumeTypes). */
const IOPS_VOLUME_TYPES = new Set(['io1', 'io2']);

/** EC2 error codes that mean "later": throttling, capacity and per-volume snapshot rate limits. */
const RETRYABLE_CODES = new Set([
  'RequestLimitExceeded',
  'Throttling',
  'ThrottlingException',
  'RequestThrottled',
  'TooManyRequestsException',
  'SnapshotCreationPerVolumeRateExceeded',
  'ConcurrentSnapshotLimitExceeded',
  'InsufficientVolumeCapacity',
  'InternalError',
  'InternalFailure',
  'ServiceUnavailable',
  'Unavailable',
]);

const toEc2Tags = (tags: readonly Tag[]): Ec2Tag[] => tags.map((t) => ({ Key: t.key, Value: t.value }));
const fromEc2Tags = (tags: readonly Ec2Tag[] | undefined): Tag[] =>
  (tags ?? []).flatMap((t) => (t.Key === undefined ? [] : [{ key: t.Key, value: t.Value ?? '' }]));

/** The error a failed EC2 call becomes; an abort or a bug is passed on unchanged. */
export function ec2ErrorOf(
  error: unknown,
  context: { what: string; signal?: AbortSignal | undefined },
): unknown {
  return awsErrorOf(error, { ...context, service: EC2ServiceException, retryableCodes: RETRYABLE_CODES });
}

const errorCode = (error: unknown): string | undefined =>
  error instanceof EC2ServiceException ? error.name : undefined;

function percentOf(progress: string | undefined): number | undefined {
  const match = progress ? /^(\d{1,3})%?$/.exec(progress.trim()) : null;
  return match ? Math.min(100, Number(match[1])) : undefined;
}

function progressOf(snapshot: Snapshot): SnapshotProgress {
  const percent = percentOf(snapshot.Progress);
  return {
    snapshotId: snapshot.SnapshotId ?? '',
    state: (snapshot.State ?? 'pending') as SnapshotState,
    ...(percent === undefined ? {} : { percent }),
    ...(snapshot.StateMessage ? { stateMessage: snapshot.StateMessage } : {}),
    ...(snapshot.StartTime ? { startTime: snapshot.StartTime } : {}),
    ...(snapshot.VolumeId ? { volumeId: snapshot.VolumeId } : {}),
    encrypted: snapshot.Encrypted ?? false,
    tags: fromEc2Tags(snapshot.Tags),
    ...(snapshot.OwnerId ? { ownerId: snapshot.OwnerId } : {}),
  };
}

const statusOf = (volume: Volume): VolumeStatus => ({
  volumeId: volume.VolumeId ?? '',
  state: (volume.State ?? 'creating') as VolumeState,
  availabilityZone: volume.AvailabilityZone ?? '',
});

export class EbsSnapshotter implements Snapshotter {
  private readonly client: EC2Client;

  constructor(options: { client: EC2Client }) {
    this.client = options.client;
  }

  async describeVolume(volumeId: string, options?: { signal?: AbortSignal }): Promise<VolumeDescription> {
    const what = `DescribeVolumes ${volumeId}`;
    let res: DescribeVolumesCommandOutput;
    try {
      res = await this.client.send(new DescribeVolumesCommand({ VolumeIds: [volumeId] }), {
        abortSignal: options?.signal,
      });
    } catch (error) {
      throw ec2ErrorOf(error, { what, signal: options?.signal });
    }
    const volumes = res.Volumes ?? [];
    const [volume, ...more] = volumes;
    if (!volume || more.length > 0) {
      throw new CloudRequestRefused(`${what}: expected one volume, got ${volumes.length}`, {
        code: 'InvalidVolume.NotFound',
      });
    }
    const volumeType = volume.VolumeType ?? '';
    return {
      volumeId,
      volumeType,
      ...(IOPS_VOLUME_TYPES.has(volumeType) && volume.Iops !== undefined ? { iops: volume.Iops } : {}),
      availabilityZone: volume.AvailabilityZone ?? '',
      sizeGiB: volume.Size ?? 0,
      encrypted: volume.Encrypted ?? false,
      ...(volume.KmsKeyId ? { kmsKeyId: volume.KmsKeyId } : {}),
      tags: fromEc2Tags(volume.Tags),
    };
  }

  async createSnapshot(options: {
    volumeId: string;
    tags: readonly Tag[];
    description?: string;
    signal?: AbortSignal;
  }): Promise<{ snapshotId: string; startTime?: Date }> {
    const what = `CreateSnapshot of ${options.volumeId}`;
    let res: CreateSnapshotCommandOutput;
    try {
      // No KMS key here: EC2 CreateSnapshot has none; a snapshot is encrypted exactly as its volume
      // is. A different key would need CopySnapshot, and Velero's ebsKmsKeyId applies at restore.
      res = await this.client.send(
        new CreateSnapshotCommand({
          VolumeId: options.volumeId,
          ...(options.description ? { Description: options.description } : {}),
          TagSpecifications: [{ ResourceType: 'snapshot', Tags: toEc2Tags(options.tags) }],
        }),
        { abortSignal: options.signal },
      );
    } catch (error) {
      throw ec2ErrorOf(error, { what, signal: options.signal });
    }
    if (!res.SnapshotId)
      throw new CloudRequestRefused(`${what}: no snapshot id returned`, { code: 'NoSnapshotId' });
    return { snapshotId: res.SnapshotId, ...(res.StartTime ? { startTime: res.StartTime } : {}) };
  }

  private async describeSnapshot(
    snapshotId: string,
    options: { signal?: AbortSignal | undefined; missing: 'retry' | 'refuse' },
  ): Promise<Snapshot> {
    const { signal } = options;
    const what = `DescribeSnapshots ${snapshotId}`;
    let res: DescribeSnapshotsCommandOutput;
    try {
      res = await this.client.send(new DescribeSnapshotsCommand({ SnapshotIds: [snapshotId] }), {
        abortSignal: signal,
      });
    } catch (error) {
      // EC2 is eventually consistent: a snapshot just created may not be visible for a moment.
      // The poller repeats until itemOperationTimeout, which bounds a snapshot that is truly gone.
      if (errorCode(error) === 'InvalidSnapshot.NotFound') {
        // A restore's snapshot was taken long before: one that is gone stays gone.
        if (options.missing === 'refuse')
          throw new CloudRequestRefused(`${what}: not found`, {
            code: 'InvalidSnapshot.NotFound',
            cause: error,
          });
        throw new RetryableError(`${what}: not found (yet)`, { cause: error });
      }
      throw ec2ErrorOf(error, { what, signal });
    }
    const snapshots = res.Snapshots ?? [];
    const [snapshot, ...more] = snapshots;
    if (!snapshot && options.missing === 'refuse')
      throw new CloudRequestRefused(`${what}: not found`, { code: 'InvalidSnapshot.NotFound' });
    if (!snapshot || more.length > 0) {
      throw new RetryableError(`${what}: expected one snapshot, got ${snapshots.length}`);
    }
    return snapshot;
  }

  async findSnapshots(options: { tags: readonly Tag[]; signal?: AbortSignal }): Promise<SnapshotProgress[]> {
    const found: SnapshotProgress[] = [];
    let token: string | undefined;
    try {
      do {
        const page = await this.client.send(
          new DescribeSnapshotsCommand({
            OwnerIds: ['self'],
            Filters: options.tags.map((t) => ({ Name: `tag:${t.key}`, Values: [t.value] })),
            ...(token ? { NextToken: token } : {}),
          }),
          { abortSignal: options.signal },
        );
        for (const snapshot of page.Snapshots ?? [])
          if (snapshot.SnapshotId) found.push(progressOf(snapshot));
        token = page.NextToken;
      } while (token);
    } catch (error) {
      throw ec2ErrorOf(error, { what: 'DescribeSnapshots by tag', signal: options.signal });
    }
    return found;
  }

  async snapshotProgress(snapshotId: string, options?: { signal?: AbortSignal }): Promise<SnapshotProgress> {
    return progressOf(await this.describeSnapshot(snapshotId, { signal: options?.signal, missing: 'retry' }));
  }

  async createVolumeFromSnapshot(options: {
    snapshotId: string;
    availabilityZone: string;
    volumeType?: string;
    iops?: number;
    kmsKeyId?: string;
    tags?: readonly Tag[];
    clusterName?: string;
    clientToken?: string;
    signal?: AbortSignal;
  }): Promise<{ volumeId: string }> {
    const snapshot = await this.describeSnapshot(options.snapshotId, {
      signal: options.signal,
      missing: 'refuse',
    });
    const what = `CreateVolume from ${options.snapshotId} in ${options.availabilityZone}`;
    const tags = restoredVolumeTags({
      snapshotTags: fromEc2Tags(snapshot.Tags),
      ...(options.clusterName ? { clusterName: options.clusterName } : {}),
      ...(options.tags ? { extra: options.tags } : {}),
    });
    let res: CreateVolumeCommandOutput;
    try {
      res = await this.client.send(
        new CreateVolumeCommand({
          ...(options.clientToken ? { ClientToken: options.clientToken } : {}),
          SnapshotId: options.snapshotId,
          AvailabilityZone: options.availabilityZone,
          ...(options.volumeType ? { VolumeType: options.volumeType as VolumeType } : {}),
          ...(options.volumeType && IOPS_VOLUME_TYPES.has(options.volumeType) && options.iops !== undefined
            ? { Iops: options.iops }
            : {}),
          // Velero: encrypted as the snapshot is, or with ebsKmsKeyId when the location names one.
          ...(options.kmsKeyId
            ? { Encrypted: true, KmsKeyId: options.kmsKeyId }
            : { Encrypted: snapshot.Encrypted ?? false }),
          ...(tags.length > 0
            ? { TagSpecifications: [{ ResourceType: 'volume', Tags: toEc2Tags(tags) }] }
            : {}),
        }),
        { abortSignal: options.signal },
      );
    } catch (error) {
      throw ec2ErrorOf(error, { what, signal: options.signal });
    }
    if (!res.VolumeId)
      throw new CloudRequestRefused(`${what}: no volume id returned`, { code: 'NoVolumeId' });
    return { volumeId: res.VolumeId };
  }

  async findVolumes(options: { tags: readonly Tag[]; signal?: AbortSignal }): Promise<VolumeStatus[]> {
    const found: VolumeStatus[] = [];
    let token: string | undefined;
    try {
      do {
        const page = await this.client.send(
          new DescribeVolumesCommand({
            Filters: options.tags.map((t) => ({ Name: `tag:${t.key}`, Values: [t.value] })),
            ...(token ? { NextToken: token } : {}),
          }),
          { abortSignal: options.signal },
        );
        for (const volume of page.Volumes ?? []) if (volume.VolumeId) found.push(statusOf(volume));
        token = page.NextToken;
      } while (token);
    } catch (error) {
      throw ec2ErrorOf(error, { what: 'DescribeVolumes by tag', signal: options.signal });
    }
    return found;
  }

  async volumeStatus(volumeId: string, options?: { signal?: AbortSignal }): Promise<VolumeStatus> {
    const what = `DescribeVolumes ${volumeId}`;
    let res: DescribeVolumesCommandOutput;
    try {
      res = await this.client.send(new DescribeVolumesCommand({ VolumeIds: [volumeId] }), {
        abortSignal: options?.signal,
      });
    } catch (error) {
      // EC2 is eventually consistent: a volume just created may not be visible for a moment; the
      // restore's item operation timeout bounds one that never shows.
      if (errorCode(error) === 'InvalidVolume.NotFound')
        throw new RetryableError(`${what}: not found (yet)`, { cause: error });
      throw ec2ErrorOf(error, { what, signal: options?.signal });
    }
    const [volume] = res.Volumes ?? [];
    if (!volume) throw new RetryableError(`${what}: not found (yet)`);
    return statusOf(volume);
  }

  async deleteSnapshot(snapshotId: string, options?: { signal?: AbortSignal }): Promise<void> {
    try {
      await this.client.send(new DeleteSnapshotCommand({ SnapshotId: snapshotId }), {
        abortSignal: options?.signal,
      });
    } catch (error) {
      // Velero's DeleteSnapshot: a snapshot that is already gone is deleted.
      if (errorCode(error) === 'InvalidSnapshot.NotFound') return;
      throw ec2ErrorOf(error, { what: `DeleteSnapshot ${snapshotId}`, signal: options?.signal });
    }
  }
}

/**
 * A snapshotter on the ambient AWS configuration (credentials chain, AWS_REGION), for the local
 * runtime; its client retries throttling and 5xx up to eight times.
 */
export function ambientEbsSnapshotter(): EbsSnapshotter {
  return new EbsSnapshotter({ client: new EC2Client({ maxAttempts: 8 }) });
}
