/**
 * Copies of EBS snapshots into other accounts and regions (Lifeboat's `copySnapshots`): the
 * source side shares a snapshot with an account (createVolumePermission, and a KMS grant on its
 * customer key), the target side copies it, re-encrypted with its own key, and follows the copy.
 * Implemented over EC2 and KMS by adapters/ebs-snapshot-copies. Failures surface as
 * RetryableError or CloudRequestRefused, as the Snapshotter's do.
 */

import type { Tag } from '../domain/volumes/ebs-volume.js';
import type { CopyTarget } from '../domain/volumes/snapshot-copies.js';
import type { SnapshotProgress } from './snapshotter.js';

export interface SnapshotCopies {
  /** The region of the source snapshots (the backup's). */
  readonly sourceRegion: string;
  /**
   * Lets `account` copy the source snapshot: createVolumePermission, and a grant (Decrypt,
   * DescribeKey, CreateGrant, ReEncryptFrom) on its customer key when it has one. Idempotent.
   */
  share(options: { snapshotId: string; account: string; signal?: AbortSignal }): Promise<void>;
  /**
   * Starts the copy in the target's account and region (through its role), encrypted with its
   * key, tagged with `tags`; a copy there carrying every one of them already (a retried step's
   * first attempt) is returned instead of making a second.
   */
  copy(options: {
    target: CopyTarget;
    sourceSnapshotId: string;
    tags: readonly Tag[];
    description: string;
    signal?: AbortSignal;
  }): Promise<{ snapshotId: string }>;
  /** One look at a copy in its target. */
  progress(options: {
    target: CopyTarget;
    snapshotId: string;
    signal?: AbortSignal;
  }): Promise<SnapshotProgress>;
}
