/**
 * The blocks of EBS snapshots, read and written through the EBS direct APIs: what the data mover's
 * block mode needs. One instance speaks for one account and region (a restore's target gets its
 * own). Implemented by adapters/ebs-snapshot-blocks over @aws-sdk/client-ebs.
 *
 * Failures surface as RetryableError (throttling, 5xx, network, a block whose checksum did not
 * match after the adapter's own retries) or CloudRequestRefused (repeating will not help; `code`
 * is AWS's, e.g. `ValidationException`, `ResourceNotFoundException`). An aborted signal ends a
 * call with the abort's error. Never: a block returned without its SHA-256 checked, a block sent
 * without its checksum.
 */

/** AWS: a snapshot's blocks are 512 KiB, always. */
export const EBS_BLOCK_SIZE = 524_288;

/** A block read: its bytes and their SHA-256, computed from those bytes and equal to AWS's checksum. */
export interface SnapshotBlockData {
  readonly data: Uint8Array;
  readonly sha256: Uint8Array;
}

export interface SnapshotBlockRef {
  readonly index: number;
  /** Needed to read the block; valid for 7 days (AWS). */
  readonly token: string;
}

export interface ChangedBlockRef {
  readonly index: number;
  /** Absent when the block has no data in the first snapshot. */
  readonly firstToken?: string;
  /** Absent when the block has no data in the second snapshot (it reads as zeros there). */
  readonly secondToken?: string;
}

/** One page of a listing; indexes ascend within and across pages. */
export interface BlockPage<T> {
  readonly volumeSizeGiB: number;
  readonly blockSizeBytes: number;
  readonly blocks: readonly T[];
}

export type EbsSnapshotStatus = 'pending' | 'completed' | 'error';

export interface StartedSnapshot {
  readonly snapshotId: string;
  readonly status: EbsSnapshotStatus;
  readonly blockSizeBytes: number;
  readonly volumeSizeGiB: number;
  readonly kmsKeyArn?: string;
}

export interface SnapshotBlocks {
  /** The snapshot's blocks that hold data, page by page (AWS pages of up to 10,000). */
  listSnapshotBlocks(options: {
    snapshotId: string;
    startingBlockIndex?: number;
    signal?: AbortSignal;
  }): AsyncIterable<BlockPage<SnapshotBlockRef>>;
  /**
   * Blocks that differ between two snapshots of one volume's lineage, page by page: written,
   * changed or gone in the second. `secondToken` reads the second snapshot's data.
   */
  listChangedBlocks(options: {
    firstSnapshotId: string;
    secondSnapshotId: string;
    startingBlockIndex?: number;
    signal?: AbortSignal;
  }): AsyncIterable<BlockPage<ChangedBlockRef>>;
  /** One block's 512 KiB, its SHA-256 checked against the checksum AWS sent with it. */
  getSnapshotBlock(options: {
    snapshotId: string;
    blockIndex: number;
    blockToken: string;
    signal?: AbortSignal;
  }): Promise<SnapshotBlockData>;
  /**
   * A new pending snapshot to write blocks into. `clientToken` makes it idempotent: the same
   * token (with the same parameters) returns the snapshot the first call started.
   */
  startSnapshot(options: {
    volumeSizeGiB: number;
    parentSnapshotId?: string;
    /** AWS refuses it together with a parent (the parent's encryption is inherited). */
    encrypted?: boolean;
    kmsKeyArn?: string;
    tags?: Readonly<Record<string, string>>;
    description?: string;
    clientToken?: string;
    /** Minutes without a write after which AWS fails the snapshot (AWS default 60). */
    timeoutMinutes?: number;
    signal?: AbortSignal;
  }): Promise<StartedSnapshot>;
  /** Writes one full block, sent with its SHA-256 checksum. */
  putSnapshotBlock(options: {
    snapshotId: string;
    blockIndex: number;
    data: Uint8Array;
    /** 0–100, how far the whole upload is (AWS Progress). */
    progressPercent?: number;
    signal?: AbortSignal;
  }): Promise<void>;
  /** Seals the snapshot; AWS checks `changedBlocksCount` against the blocks it received. */
  completeSnapshot(options: {
    snapshotId: string;
    changedBlocksCount: number;
    signal?: AbortSignal;
  }): Promise<EbsSnapshotStatus>;
}
