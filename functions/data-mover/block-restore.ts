/**
 * Block-mode restore: a block manifest from the repository into a new EBS snapshot through the
 * EBS direct APIs of the target (any account and region, optionally encrypted with a KMS key):
 * StartSnapshot, PutSnapshotBlock with its SHA-256 for every non-empty block (at most
 * `concurrency` in flight), CompleteSnapshot with the count of blocks written; then, if asked, a
 * volume from it (the Snapshotter port's CreateVolume).
 *
 * Idempotent: StartSnapshot carries `clientToken`, so a re-run after a crash writes into the same
 * pending snapshot (writing a block again is harmless) or, given a target snapshotter, finds it
 * already completed and goes straight to the volume. Memory stays bounded: the block map is read
 * one chunk at a time. Never completes a snapshot before every block's write was acknowledged.
 */

import { CloudRequestRefused, RetryableError, ValidationFailed } from '../../shared/domain/errors.js';
import {
  type BlockMapEntry,
  parseBlockMapChunk,
  volumeSizeGiB,
} from '../../shared/domain/repository/block-map.js';
import type { Tag } from '../../shared/domain/volumes/ebs-volume.js';
import type { BlobId, Repository, SnapshotManifest } from '../../shared/ports/repository.js';
import {
  EBS_BLOCK_SIZE,
  type EbsSnapshotStatus,
  type SnapshotBlocks,
} from '../../shared/ports/snapshot-blocks.js';
import type { SnapshotState, Snapshotter } from '../../shared/ports/snapshotter.js';
import type { BlockProgress } from './block-backup.js';
import { sleep, TaskPool } from './task-pool.js';

/** Blocks whose blobs are asked for at once (8 MiB of 512 KiB blocks): one request or a few. */
export const READ_BATCH_BLOCKS = 16;

export interface BlockRestoreOptions {
  readonly repository: Repository;
  readonly manifestId: string;
  /** The EBS direct APIs of the target account and region. */
  readonly target: SnapshotBlocks;
  /** EC2 of the same target: the snapshot's state (on a re-run) and the optional volume. */
  readonly targetSnapshotter?: Snapshotter;
  /** Idempotency of StartSnapshot, e.g. derived from the restore's name and the volume. */
  readonly clientToken: string;
  /** Encrypts the new snapshot with this key (AWS: the account's default key when only `encrypted`). */
  readonly kmsKeyArn?: string;
  readonly encrypted?: boolean;
  readonly tags?: Readonly<Record<string, string>>;
  readonly description?: string;
  readonly volume?: {
    readonly availabilityZone: string;
    readonly volumeType?: string;
    readonly iops?: number;
    readonly tags?: readonly Tag[];
    readonly clientToken?: string;
  };
  /** PutSnapshotBlock calls in flight (default 32). */
  readonly concurrency?: number;
  readonly onProgress?: (progress: BlockProgress) => void;
  /** How long to wait for a completing snapshot before a volume is made from it (default 30 min). */
  readonly completionTimeoutMs?: number;
  readonly signal?: AbortSignal;
}

export interface BlockRestoreResult {
  readonly snapshotId: string;
  readonly blocksWritten: number;
  readonly bytesWritten: number;
  readonly volumeId?: string;
  readonly kmsKeyArn?: string;
}

const decoder = new TextDecoder();

type BlockManifest = SnapshotManifest & { readonly kind: 'block' };

export async function restoreBlocks(options: BlockRestoreOptions): Promise<BlockRestoreResult> {
  const { target, signal } = options;
  const withSignal = signal ? { signal } : {};
  const manifest = await blockManifestOf(options);
  if (options.volume && !options.targetSnapshotter)
    throw new ValidationFailed([{ path: 'volume', message: 'a volume needs the target snapshotter' }]);

  const started = await target.startSnapshot({
    volumeSizeGiB: volumeSizeGiB(manifest.volumeSizeBytes),
    ...(options.kmsKeyArn ? { encrypted: true, kmsKeyArn: options.kmsKeyArn } : {}),
    ...(options.encrypted ? { encrypted: true } : {}),
    tags: options.tags ?? {},
    ...(options.description ? { description: options.description } : {}),
    clientToken: options.clientToken,
    ...withSignal,
  });
  const { snapshotId } = started;
  // A re-run whose first attempt got as far as CompleteSnapshot: the snapshot is done.
  const already = options.targetSnapshotter
    ? await stateOf(options.targetSnapshotter, snapshotId, signal)
    : 'pending';
  if (already === 'error')
    throw new CloudRequestRefused(`restored snapshot ${snapshotId} is in state error`, {
      code: 'SnapshotError',
    });

  const blocksTotal = Math.round(manifest.stats.totalBytes / EBS_BLOCK_SIZE);
  let blocksWritten = blocksTotal;
  if (already === 'pending') {
    const writing = new SnapshotBlockWrites({ options, snapshotId, blocksTotal });
    await writing.writeAll(manifest.blockMap);
    await writing.complete();
    blocksWritten = writing.blocksWritten;
  }
  const volumeId = await volumeOf(options, snapshotId);
  return {
    snapshotId,
    blocksWritten,
    bytesWritten: blocksWritten * EBS_BLOCK_SIZE,
    ...(volumeId ? { volumeId } : {}),
    ...(started.kmsKeyArn ? { kmsKeyArn: started.kmsKeyArn } : {}),
  };
}

/** The manifest to restore, checked: of block mode, with EBS's block size. */
async function blockManifestOf(options: BlockRestoreOptions): Promise<BlockManifest> {
  const { signal } = options;
  const manifest = await options.repository.readManifest(options.manifestId, signal ? { signal } : {});
  if (manifest.kind !== 'block')
    throw new ValidationFailed([
      { path: 'manifestId', message: `manifest ${options.manifestId} is not of block mode` },
    ]);
  if (manifest.blockSizeBytes !== EBS_BLOCK_SIZE)
    throw new ValidationFailed([
      {
        path: 'manifestId',
        message: `manifest ${options.manifestId} has ${manifest.blockSizeBytes}-byte blocks`,
      },
    ]);
  return manifest;
}

/**
 * A manifest's blocks written into the pending snapshot, at most `concurrency` PutSnapshotBlock
 * calls in flight, then the snapshot completed.
 */
class SnapshotBlockWrites {
  blocksWritten = 0;
  private readonly options: BlockRestoreOptions;
  private readonly snapshotId: string;
  private readonly blocksTotal: number;
  private readonly pool: TaskPool;

  constructor(write: { options: BlockRestoreOptions; snapshotId: string; blocksTotal: number }) {
    this.options = write.options;
    this.snapshotId = write.snapshotId;
    this.blocksTotal = write.blocksTotal;
    const { signal } = write.options;
    this.pool = new TaskPool({ limit: write.options.concurrency ?? 32, ...(signal ? { signal } : {}) });
  }

  /** Writes the blocks of every chunk of the block map, in order; returns once all are written. */
  async writeAll(blockMap: readonly BlobId[]): Promise<void> {
    const { pool } = this;
    try {
      for (const chunkId of blockMap) await this.writeChunk(chunkId);
      await pool.drain();
    } catch (error) {
      await pool.abort(error);
      // A read aborted because a write failed (or the run was cancelled) reports that cause,
      // not its own abort (the SDK's "Request aborted").
      throw pool.signal.reason ?? error;
    }
  }

  private async writeChunk(chunkId: BlobId): Promise<void> {
    const { repository } = this.options;
    const entries = parseBlockMapChunk(
      decoder.decode(await repository.getBlob(chunkId, { signal: this.pool.signal })),
    );
    // Blocks are read a batch at a time (blobs side by side in a pack come with one
    // request), the next batch while this one's blocks are being written.
    const batches: (typeof entries)[] = [];
    for (let at = 0; at < entries.length; at += READ_BATCH_BLOCKS)
      batches.push(entries.slice(at, at + READ_BATCH_BLOCKS));
    let reading = this.readBatch(batches[0]);
    for (const [b, batch] of batches.entries()) {
      const blobs = (await reading) ?? [];
      reading = this.readBatch(batches[b + 1]);
      for (const [k, [blockIndex, blobId]] of batch.entries())
        await this.writeBlock({ blockIndex, blobId, data: blobs[k] ?? new Uint8Array(0) });
    }
  }

  private readBatch(batch: readonly BlockMapEntry[] | undefined): Promise<Uint8Array[]> | undefined {
    if (!batch) return undefined;
    const reading = this.options.repository.getBlobs(
      batch.map(([, blobId]) => blobId),
      { signal: this.pool.signal },
    );
    // Awaited below in order; never an unhandled rejection meanwhile.
    reading.catch(() => undefined);
    return reading;
  }

  /** Starts one PutSnapshotBlock once the pool has room. */
  private async writeBlock(block: { blockIndex: number; blobId: BlobId; data: Uint8Array }): Promise<void> {
    const { blockIndex, blobId, data } = block;
    const { blocksTotal } = this;
    await this.pool.run(async (taskSignal) => {
      if (data.length !== EBS_BLOCK_SIZE)
        throw new CloudRequestRefused(`blob ${blobId} of block ${blockIndex} holds ${data.length} bytes`, {
          code: 'UnexpectedBlockSize',
        });
      await this.options.target.putSnapshotBlock({
        snapshotId: this.snapshotId,
        blockIndex,
        data,
        progressPercent: blocksTotal === 0 ? 100 : (100 * this.blocksWritten) / blocksTotal,
        signal: taskSignal,
      });
      this.blocksWritten++;
      this.report();
    });
  }

  private report(): void {
    const { blocksWritten, blocksTotal } = this;
    this.options.onProgress?.({
      bytesDone: blocksWritten * EBS_BLOCK_SIZE,
      bytesTotal: blocksTotal * EBS_BLOCK_SIZE,
      totalKnown: true,
      blocksDone: blocksWritten,
      blocksTotal,
    });
  }

  /** CompleteSnapshot with the count of blocks written (every write acknowledged by now). */
  async complete(): Promise<void> {
    const { snapshotId, options } = this;
    this.report();
    const status: EbsSnapshotStatus = await options.target.completeSnapshot({
      snapshotId,
      changedBlocksCount: this.blocksWritten,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (status === 'error')
      throw new CloudRequestRefused(`CompleteSnapshot ${snapshotId}: the snapshot failed`, {
        code: 'SnapshotError',
      });
  }
}

/** The volume asked for, made from the snapshot once AWS has completed it. */
async function volumeOf(options: BlockRestoreOptions, snapshotId: string): Promise<string | undefined> {
  const { signal, volume } = options;
  const snapshotter = options.targetSnapshotter;
  // (Checked at the start: a volume comes with the target's snapshotter.)
  if (!volume || !snapshotter) return undefined;
  await waitCompleted({
    snapshotter,
    snapshotId,
    timeoutMs: options.completionTimeoutMs ?? 30 * 60_000,
    signal,
  });
  const made = await snapshotter.createVolumeFromSnapshot({
    snapshotId,
    availabilityZone: volume.availabilityZone,
    ...(volume.volumeType ? { volumeType: volume.volumeType } : {}),
    ...(volume.iops !== undefined ? { iops: volume.iops } : {}),
    ...(options.kmsKeyArn ? { kmsKeyId: options.kmsKeyArn } : {}),
    ...(volume.tags ? { tags: volume.tags } : {}),
    ...(volume.clientToken ? { clientToken: volume.clientToken } : {}),
    ...(signal ? { signal } : {}),
  });
  return made.volumeId;
}

/** The started snapshot's state; one EC2 does not show yet (eventual consistency) is still pending. */
async function stateOf(
  snapshotter: Snapshotter,
  snapshotId: string,
  signal: AbortSignal | undefined,
): Promise<SnapshotState> {
  try {
    return (await snapshotter.snapshotProgress(snapshotId, signal ? { signal } : {})).state;
  } catch (error) {
    if (error instanceof RetryableError) return 'pending';
    throw error;
  }
}

/** AWS completes a snapshot asynchronously after CompleteSnapshot; a volume needs it completed. */
async function waitCompleted(options: {
  snapshotter: Snapshotter;
  snapshotId: string;
  timeoutMs: number;
  signal: AbortSignal | undefined;
}): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  for (let delay = 500; ; delay = Math.min(delay * 2, 15_000)) {
    const progress = await options.snapshotter.snapshotProgress(
      options.snapshotId,
      options.signal ? { signal: options.signal } : {},
    );
    if (progress.state === 'completed') return;
    if (progress.state === 'error')
      throw new CloudRequestRefused(`restored snapshot ${options.snapshotId} is in state error`, {
        code: 'SnapshotError',
      });
    if (Date.now() >= deadline)
      throw new RetryableError(`restored snapshot ${options.snapshotId} is still ${progress.state}`);
    await sleep(delay, options.signal);
  }
}
