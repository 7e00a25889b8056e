/**
 * Block-mode backup: an EBS snapshot's non-empty blocks into the repository, read with the EBS
 * direct APIs (GetSnapshotBlock, at most `concurrency` in flight), each block a blob (stored ones
 * are deduplicated, all-zero ones skipped), then the block map and one manifest of kind 'block'.
 *
 * Incremental: given the manifest of an earlier snapshot of the same volume, only the blocks
 * ListChangedBlocks names are read; the parent's block map supplies the others (unchanged map
 * chunks are the parent's blobs again). When EBS cannot compare the two snapshots (the earlier one
 * is deleted, or of another lineage) the backup reads everything instead.
 *
 * Resumable: blobs already stored are not uploaded again; with `checkpoints`, finished ranges of
 * the block map are recorded (after the writer's flush made them durable), so a re-run after a
 * crash lists and reads only from the first unfinished range on. Memory stays bounded whatever
 * the volume's size: one listing page, the blocks in flight and the open map ranges.
 * Never writes the manifest before every blob it names is flushed.
 */

import { SnapshotManifestMissing, ValidationFailed } from '../../shared/domain/errors.js';
import { BLOCK_MAP_RANGE, rangeOf } from '../../shared/domain/repository/block-map.js';
import type {
  BlobId,
  BlockSource,
  Repository,
  RepositoryWriter,
  SnapshotManifest,
  WriteStats,
} from '../../shared/ports/repository.js';
import { EBS_BLOCK_SIZE, type SnapshotBlocks } from '../../shared/ports/snapshot-blocks.js';
import { BlockMapRanges, type OpenRange } from './block-map-ranges.js';
import { type BlockListing, blocksToRead, parentChunks, type WorkItem } from './block-sources.js';
import { TaskPool } from './task-pool.js';

export interface BlockProgress {
  readonly bytesDone: number;
  /** Grows while the listing is read; final once `totalKnown`. */
  readonly bytesTotal: number;
  readonly totalKnown: boolean;
  readonly blocksDone: number;
  readonly blocksTotal: number;
}

/** What a backup run has durably finished: every map range below `nextRange`. */
export interface BlockBackupCheckpoint {
  readonly snapshotId: string;
  readonly parentManifestId?: string;
  readonly nextRange: number;
  /** Block-map chunk blobs of the finished ranges, ascending. */
  readonly chunks: readonly BlobId[];
  readonly totalBytes: number;
  readonly blocksRead: number;
  readonly bytesRead: number;
  readonly writes: WriteStats;
}

/** Where a backup keeps its checkpoint between runs (the entry point: an object in the work prefix). */
export interface BlockBackupCheckpoints {
  load(): Promise<BlockBackupCheckpoint | undefined>;
  save(checkpoint: BlockBackupCheckpoint): Promise<void>;
}

export interface BlockBackupResult {
  readonly manifest: SnapshotManifest & { readonly kind: 'block' };
  /** False when there was no parent (or it was deleted meanwhile), or EBS could not compare against it. */
  readonly incremental: boolean;
  /** This run alone (a resumed run reads only what the crashed one left). */
  readonly run: { readonly blocksRead: number; readonly bytesRead: number; readonly resumedAtBlock: number };
}

export interface BlockBackupOptions {
  readonly blocks: SnapshotBlocks;
  readonly repository: Repository;
  readonly snapshotId: string;
  readonly manifestId: string;
  readonly tags?: Readonly<Record<string, string>>;
  readonly source?: Omit<BlockSource, 'snapshotId'>;
  /** A block-mode manifest of an earlier snapshot of the same volume; when it is gone, a full read. */
  readonly parentManifestId?: string;
  /** GetSnapshotBlock calls in flight (default 32). */
  readonly concurrency?: number;
  readonly onProgress?: (progress: BlockProgress) => void;
  readonly checkpoints?: BlockBackupCheckpoints;
  /** Least time between two checkpoints (default 30 s): each one flushes the writer's open pack. */
  readonly checkpointEveryMs?: number;
  readonly now?: () => Date;
  readonly signal?: AbortSignal;
}

const ZERO_BLOCK = new Uint8Array(EBS_BLOCK_SIZE);

function isAllZero(data: Uint8Array): boolean {
  if (data.length === ZERO_BLOCK.length)
    return Buffer.from(data.buffer, data.byteOffset, data.length).equals(ZERO_BLOCK);
  return data.every((b) => b === 0);
}

const emptyStats: WriteStats = {
  blobsStored: 0,
  blobsDeduplicated: 0,
  rawBytes: 0,
  storedBytes: 0,
  packsWritten: 0,
};

const addStats = (a: WriteStats, b: WriteStats): WriteStats => ({
  blobsStored: a.blobsStored + b.blobsStored,
  blobsDeduplicated: a.blobsDeduplicated + b.blobsDeduplicated,
  rawBytes: a.rawBytes + b.rawBytes,
  storedBytes: a.storedBytes + b.storedBytes,
  packsWritten: a.packsWritten + b.packsWritten,
});

async function parentManifestOf(
  repository: Repository,
  id: string,
  signal: AbortSignal | undefined,
): Promise<(SnapshotManifest & { kind: 'block' }) | undefined> {
  let manifest: SnapshotManifest;
  try {
    manifest = await repository.readManifest(id, signal ? { signal } : {});
  } catch (error) {
    // Deleted (`backup delete` and garbage collection) since the job was planned: a full read.
    if (error instanceof SnapshotManifestMissing) return undefined;
    throw error;
  }
  if (manifest.kind !== 'block')
    throw new ValidationFailed([
      { path: 'parentManifestId', message: `manifest ${id} is not of block mode` },
    ]);
  if (manifest.blockSizeBytes !== EBS_BLOCK_SIZE)
    throw new ValidationFailed([
      { path: 'parentManifestId', message: `manifest ${id} has ${manifest.blockSizeBytes}-byte blocks` },
    ]);
  return manifest;
}

/** Where a run starts: the parent (unless deleted meanwhile) and the checkpoint of an earlier run. */
interface StartingPoint {
  readonly parent: (SnapshotManifest & { kind: 'block' }) | undefined;
  readonly parentManifestId: string | undefined;
  readonly checkpoint: BlockBackupCheckpoint | undefined;
  readonly startRange: number;
}

async function startingPoint(options: BlockBackupOptions): Promise<StartingPoint> {
  const { repository, snapshotId, signal } = options;
  const parent = options.parentManifestId
    ? await parentManifestOf(repository, options.parentManifestId, signal)
    : undefined;
  const parentManifestId = parent ? options.parentManifestId : undefined;
  const saved = await options.checkpoints?.load();
  // A checkpoint of another snapshot, or taken against another parent, is not this backup's.
  const checkpoint =
    saved && saved.snapshotId === snapshotId && saved.parentManifestId === parentManifestId
      ? saved
      : undefined;
  return { parent, parentManifestId, checkpoint, startRange: checkpoint?.nextRange ?? 0 };
}

export async function backupBlocks(options: BlockBackupOptions): Promise<BlockBackupResult> {
  // The writer's session (its lease) starts before the parent is read: garbage collection then
  // keeps the parent's packs for as long as this run may still name their blobs.
  const writer = options.repository.writer();
  try {
    return await backupWith(writer, options);
  } finally {
    await writer.close?.().catch(() => undefined);
  }
}

async function backupWith(writer: RepositoryWriter, options: BlockBackupOptions): Promise<BlockBackupResult> {
  const { blocks, repository, snapshotId, signal } = options;
  const now = options.now ?? (() => new Date());
  const start = await startingPoint(options);
  const startIndex = start.startRange * BLOCK_MAP_RANGE;
  const listing = await blocksToRead({
    blocks,
    snapshotId,
    ...(start.parent ? { parentSnapshotId: start.parent.source.snapshotId } : {}),
    startIndex,
    signal,
  });
  const run = new BlockBackupRun({ writer, options, start, listing });
  await run.start();
  await run.readAll(listing.items);
  const manifest = run.manifest(now());
  await repository.writeManifest(manifest, signal ? { signal } : {});
  return {
    manifest,
    incremental: listing.incremental,
    run: { blocksRead: run.blocksRead, bytesRead: run.bytesRead, resumedAtBlock: startIndex },
  };
}

/**
 * One run over the listing: each block read (at most `concurrency` at once) into its range of the
 * map, the finished ranges' chunks written, progress reported and checkpoints saved as it goes.
 */
class BlockBackupRun {
  private readonly writer: RepositoryWriter;
  private readonly options: BlockBackupOptions;
  private readonly from: StartingPoint;
  private readonly listing: BlockListing;
  private readonly pool: TaskPool;
  private readonly ranges: BlockMapRanges;
  /** This run alone. */
  blocksRead = 0;
  bytesRead = 0;
  private blocksDone = 0;
  private lastCheckpoint = Date.now();

  constructor(run: {
    writer: RepositoryWriter;
    options: BlockBackupOptions;
    start: StartingPoint;
    listing: BlockListing;
  }) {
    const { writer, options, start, listing } = run;
    const { repository, signal } = options;
    this.writer = writer;
    this.options = options;
    this.from = start;
    this.listing = listing;
    this.pool = new TaskPool({ limit: options.concurrency ?? 32, ...(signal ? { signal } : {}) });
    // An incremental starts from the parent's map; a full read (also a fallback) from nothing.
    const parents =
      start.parent && listing.incremental
        ? parentChunks({ repository, chunkIds: start.parent.blockMap, fromRange: start.startRange, signal })
        : undefined;
    this.ranges = new BlockMapRanges({
      parents,
      writer,
      signal: this.pool.signal,
      chunks: start.checkpoint?.chunks ?? [],
      totalBytes: start.checkpoint?.totalBytes ?? 0,
      startRange: start.startRange,
    });
  }

  /** Reads the parent's first map chunk; checkpoints are timed from then. */
  async start(): Promise<void> {
    await this.ranges.start();
    this.lastCheckpoint = Date.now();
  }

  /** Reads every listed block into the map, keeps the parent's ranges after them, then flushes. */
  async readAll(items: AsyncGenerator<WorkItem>): Promise<void> {
    const { signal } = this.options;
    try {
      for (let item = await items.next(); !item.done; item = await items.next()) {
        const { index, token } = item.value;
        const range = await this.ranges.rangeFor(rangeOf(index));
        if (token === null) this.dropBlock(range, index);
        else await this.readBlock({ range, index, token });
        await this.finishReady();
      }
      await this.pool.drain();
      await this.ranges.closeAll();
      await this.finishReady();
      this.listing.state.done = true;
      this.report();
      await this.writer.flush(signal ? { signal } : {});
    } catch (error) {
      await this.pool.abort(error);
      throw error;
    }
  }

  /** A block that now reads as zeros: it leaves the map. */
  private dropBlock(range: OpenRange, index: number): void {
    range.changes.push({ index, blobId: null });
    this.blocksDone++;
    this.report();
  }

  /** Starts reading a block once the pool has room; its blob (none if all zeros) joins its range. */
  private async readBlock(block: { range: OpenRange; index: number; token: string }): Promise<void> {
    const { range, index, token } = block;
    const { blocks, snapshotId } = this.options;
    range.pending++;
    await this.pool.run(async (taskSignal) => {
      const { data, sha256 } = await blocks.getSnapshotBlock({
        snapshotId,
        blockIndex: index,
        blockToken: token,
        signal: taskSignal,
      });
      this.blocksRead++;
      this.bytesRead += data.length;
      // The SHA-256 checked against EBS's checksum gives the blob id: the block is hashed once.
      const blobId = isAllZero(data)
        ? null
        : (await this.writer.putBlob(data, { signal: taskSignal, sha256 })).id;
      range.changes.push({ index, blobId });
      range.pending--;
      this.blocksDone++;
      this.report();
    });
  }

  private report(): void {
    const listed = this.listing.state;
    this.options.onProgress?.({
      bytesDone: this.blocksDone * EBS_BLOCK_SIZE,
      bytesTotal: listed.listed * EBS_BLOCK_SIZE,
      totalKnown: listed.done,
      blocksDone: this.blocksDone,
      blocksTotal: listed.listed,
    });
  }

  /** Writes the map chunks of finished ranges, in order, and checkpoints now and then. */
  private async finishReady(): Promise<void> {
    const finished = await this.ranges.finishReady();
    const every = this.options.checkpointEveryMs ?? 30_000;
    if (finished && this.options.checkpoints && Date.now() - this.lastCheckpoint >= every) {
      await this.saveCheckpoint();
    }
  }

  private async saveCheckpoint(): Promise<void> {
    const { checkpoints, snapshotId } = this.options;
    const { parentManifestId, checkpoint } = this.from;
    if (!checkpoints) return;
    await this.writer.flush({ signal: this.pool.signal });
    await checkpoints.save({
      snapshotId,
      ...(parentManifestId ? { parentManifestId } : {}),
      nextRange: this.ranges.finishedRanges,
      chunks: [...this.ranges.chunks],
      totalBytes: this.ranges.totalBytes,
      blocksRead: (checkpoint?.blocksRead ?? 0) + this.blocksRead,
      bytesRead: (checkpoint?.bytesRead ?? 0) + this.bytesRead,
      writes: addStats(checkpoint?.writes ?? emptyStats, this.writer.stats()),
    });
    this.lastCheckpoint = Date.now();
  }

  /** The backup's manifest: the map built, with the figures of this run and those it resumed. */
  manifest(createdAt: Date): SnapshotManifest & { kind: 'block' } {
    const { options } = this;
    const { parent, parentManifestId, checkpoint } = this.from;
    const listed = this.listing.state;
    const writes = addStats(checkpoint?.writes ?? emptyStats, this.writer.stats());
    const volumeSizeBytes =
      (listed.volumeSizeGiB || (parent ? parent.volumeSizeBytes / 1024 ** 3 : 0)) * 1024 ** 3;
    return {
      kind: 'block',
      id: options.manifestId,
      createdAt: createdAt.toISOString(),
      tags: options.tags ?? {},
      source: { ...(options.source ?? {}), snapshotId: options.snapshotId },
      volumeSizeBytes,
      blockSizeBytes: EBS_BLOCK_SIZE,
      blockMap: this.ranges.chunks,
      ...(this.listing.incremental && parentManifestId ? { parent: parentManifestId } : {}),
      stats: {
        totalBytes: this.ranges.totalBytes,
        bytesRead: (checkpoint?.bytesRead ?? 0) + this.bytesRead,
        blocksRead: (checkpoint?.blocksRead ?? 0) + this.blocksRead,
        rawBytesStored: writes.rawBytes,
        storedBytes: writes.storedBytes,
        blobsDeduplicated: writes.blobsDeduplicated,
      },
    };
  }
}
