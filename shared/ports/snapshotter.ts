/**
 * Native block-volume snapshots (EBS), as Velero's VolumeSnapshotter does them, plus the polling
 * Lifeboat adds: a backup waits for each snapshot to complete instead of marking it done at once.
 * Implemented over EC2 by adapters/ebs-snapshotter. Failures surface as RetryableError (throttling,
 * 5xx, network) or CloudRequestRefused (repeating will not help).
 */
import type { Tag } from '../domain/volumes/ebs-volume.js';

export interface VolumeDescription {
  readonly volumeId: string;
  /** gp2, gp3, io1, io2, st1, sc1, standard. */
  readonly volumeType: string;
  /** Provisioned IOPS, recorded only for io1/io2 (velero-plugin-for-aws iopsVolumeTypes). */
  readonly iops?: number;
  readonly availabilityZone: string;
  readonly sizeGiB: number;
  readonly encrypted: boolean;
  readonly kmsKeyId?: string;
  readonly tags: readonly Tag[];
}

/** EC2 snapshot states; only `completed` can be restored from, `error` never will be. */
export type SnapshotState = 'pending' | 'completed' | 'error' | 'recoverable' | 'recovering';

export interface SnapshotProgress {
  readonly snapshotId: string;
  readonly state: SnapshotState;
  /** 0–100 when EC2 reports it. */
  readonly percent?: number;
  readonly stateMessage?: string;
  readonly startTime?: Date;
  readonly volumeId?: string;
  readonly encrypted: boolean;
  readonly tags: readonly Tag[];
  /** The account that owns the snapshot, when EC2 says. */
  readonly ownerId?: string;
}

/** EC2 volume states; a restored volume is usable once `available`, never after `error`. */
export type VolumeState = 'creating' | 'available' | 'in-use' | 'deleting' | 'deleted' | 'error';

export interface VolumeStatus {
  readonly volumeId: string;
  readonly state: VolumeState;
  readonly availabilityZone: string;
}

export interface Snapshotter {
  describeVolume(volumeId: string, options?: { signal?: AbortSignal }): Promise<VolumeDescription>;
  /**
   * Starts a snapshot of the volume with these tags and returns at once; the snapshot is
   * encrypted exactly when the volume is (EC2 CreateSnapshot takes no KMS key).
   */
  createSnapshot(options: {
    volumeId: string;
    tags: readonly Tag[];
    description?: string;
    signal?: AbortSignal;
  }): Promise<{ snapshotId: string; startTime?: Date }>;
  /**
   * This account's snapshots carrying every given tag, e.g. `velero.io/backup` and `velero.io/pv`:
   * a retried step finds the snapshot its first attempt started instead of taking a second one.
   */
  findSnapshots(options: { tags: readonly Tag[]; signal?: AbortSignal }): Promise<SnapshotProgress[]>;
  /** One look at a snapshot's state and progress. */
  snapshotProgress(snapshotId: string, options?: { signal?: AbortSignal }): Promise<SnapshotProgress>;
  /**
   * A new volume from a snapshot in the given zone (Velero CreateVolumeFromSnapshot): the
   * snapshot's tags are copied; encrypted as the snapshot is, or with `kmsKeyId` when given
   * (Velero's `ebsKmsKeyId`); `iops` only for io1/io2.
   */
  createVolumeFromSnapshot(options: {
    snapshotId: string;
    availabilityZone: string;
    volumeType?: string;
    iops?: number;
    kmsKeyId?: string;
    /** Added to (and overriding) the snapshot's tags. */
    tags?: readonly Tag[];
    /** Rewrites the cluster ownership tags for this cluster (Velero's AWS_CLUSTER_NAME). */
    clusterName?: string;
    /** EC2's idempotency token: a request the SDK repeats after a lost answer makes no second volume. */
    clientToken?: string;
    signal?: AbortSignal;
  }): Promise<{ volumeId: string }>;
  /**
   * This account's volumes carrying every given tag, e.g. `velero.io/restore` and `velero.io/pv`:
   * a retried restore step finds the volume its first attempt created instead of creating another.
   */
  findVolumes(options: { tags: readonly Tag[]; signal?: AbortSignal }): Promise<VolumeStatus[]>;
  /** One look at a volume's state. */
  volumeStatus(volumeId: string, options?: { signal?: AbortSignal }): Promise<VolumeStatus>;
  /** Deletes a snapshot; one already gone is not an error (Velero ignores InvalidSnapshot.NotFound). */
  deleteSnapshot(snapshotId: string, options?: { signal?: AbortSignal }): Promise<void>;
}

/**
 * Where a restore's volumes are made when they land elsewhere: another region, and another
 * account reached through its role (`externalId` as the role's trust policy asks). Unset fields:
 * the caller's own.
 */
export interface VolumePlace {
  readonly region?: string;
  readonly roleArn?: string;
  readonly externalId?: string;
}

/** EC2 in a volume place: the snapshotter that creates, tags and waits for volumes there. */
export type SnapshotterAt = (place: VolumePlace) => Snapshotter;
