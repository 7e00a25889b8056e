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
import { parseBlockMapChunk, volumeSizeGiB } from '../../shared/domain/repository/block-map.js';
import type { Tag } from '../../shared/domain/volumes/ebs-volume.js';
import type { Repository } from '../../shared/ports/repository.js';
import {
  EBS_BLOCK_SIZE,
  type EbsSnapshotStatus,
  type SnapshotBlocks,
} from '../../shared/ports/snapshot-blocks.js';
import type { SnapshotState, Snapshotter } from '../../shared/ports/snapshotter.js';
import type { BlockProgress } from './block-backup.js';
import { sleep, TaskPool } from './task-pool.js';

/** Blocks whose blobs are asked for at once (8 MiB of 512 KiB blocks): one request or a few. */
const READ_BATCH_BLOCKS = 16;

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

export async function restoreBlocks(options: BlockRestoreOptions): Promise<BlockRestoreResult> {
  const { repository, target, signal } = options;
  const withSignal = signal ? { signal } : {};
  const manifest = await repository.readManifest(options.manifestId, withSignal);
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
  let blocksWritten = 0;
  if (already === 'pending') {
    const pool = new TaskPool({ limit: options.concurrency ?? 32, ...withSignal });
    const report = (): void =>
      options.onProgress?.({
        bytesDone: blocksWritten * EBS_BLOCK_SIZE,
        bytesTotal: blocksTotal * EBS_BLOCK_SIZE,
        totalKnown: true,
        blocksDone: blocksWritten,
        blocksTotal,
      });
    try {
      for (const chunkId of manifest.blockMap) {
        const entries = parseBlockMapChunk(
          decoder.decode(await repository.getBlob(chunkId, { signal: pool.signal })),
        );
        // Blocks are read a batch at a time (blobs side by side in a pack come with one
        // request), the next batch while this one's blocks are being written.
        const batches: (typeof entries)[] = [];
        for (let at = 0; at < entries.length; at += READ_BATCH_BLOCKS)
          batches.push(entries.slice(at, at + READ_BATCH_BLOCKS));
        const read = (batch: typeof entries | undefined): Promise<Uint8Array[]> | undefined => {
          if (!batch) return undefined;
          const reading = repository.getBlobs(
            batch.map(([, blobId]) => blobId),
            { signal: pool.signal },
          );
          // Awaited below in order; never an unhandled rejection meanwhile.
          reading.catch(() => undefined);
          return reading;
        };
        let reading = read(batches[0]);
        for (const [b, batch] of batches.entries()) {
          const blobs = (await reading) ?? [];
          reading = read(batches[b + 1]);
          for (const [k, [blockIndex, blobId]] of batch.entries()) {
            const data = blobs[k] ?? new Uint8Array(0);
            await pool.run(async (taskSignal) => {
              if (data.length !== EBS_BLOCK_SIZE)
                throw new CloudRequestRefused(
                  `blob ${blobId} of block ${blockIndex} holds ${data.length} bytes`,
                  {
                    code: 'UnexpectedBlockSize',
                  },
                );
              await target.putSnapshotBlock({
                snapshotId,
                blockIndex,
                data,
                progressPercent: blocksTotal === 0 ? 100 : (100 * blocksWritten) / blocksTotal,
                signal: taskSignal,
              });
              blocksWritten++;
              report();
            });
          }
        }
      }
      await pool.drain();
    } catch (error) {
      await pool.abort(error);
      // A read aborted because a write failed (or the run was cancelled) reports that cause,
      // not its own abort (the SDK's "Request aborted").
      throw pool.signal.reason ?? error;
    }
    report();
    const status: EbsSnapshotStatus = await target.completeSnapshot({
      snapshotId,
      changedBlocksCount: blocksWritten,
      ...withSignal,
    });
    if (status === 'error')
      throw new CloudRequestRefused(`CompleteSnapshot ${snapshotId}: the snapshot failed`, {
        code: 'SnapshotError',
      });
  } else {
    blocksWritten = blocksTotal;
  }

  let volumeId: string | undefined;
  const snapshotter = options.targetSnapshotter;
  // (Checked at the start: a volume comes with the target's snapshotter.)
  if (options.volume && snapshotter) {
    await waitCompleted({
      snapshotter,
      snapshotId,
      timeoutMs: options.completionTimeoutMs ?? 30 * 60_000,
      signal,
    });
    const made = await snapshotter.createVolumeFromSnapshot({
      snapshotId,
      availabilityZone: options.volume.availabilityZone,
      ...(options.volume.volumeType ? { volumeType: options.volume.volumeType } : {}),
      ...(options.volume.iops !== undefined ? { iops: options.volume.iops } : {}),
      ...(options.kmsKeyArn ? { kmsKeyId: options.kmsKeyArn } : {}),
      ...(options.volume.tags ? { tags: options.volume.tags } : {}),
      ...(options.volume.clientToken ? { clientToken: options.volume.clientToken } : {}),
      ...withSignal,
    });
    volumeId = made.volumeId;
  }
  return {
    snapshotId,
    blocksWritten,
    bytesWritten: blocksWritten * EBS_BLOCK_SIZE,
    ...(volumeId ? { volumeId } : {}),
    ...(started.kmsKeyArn ? { kmsKeyArn: started.kmsKeyArn } : {}),
  };
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
