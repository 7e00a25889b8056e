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
import {
  BLOCK_MAP_RANGE,
  type BlockChange,
  encodeBlockMapChunk,
  mergeBlockRange,
  rangeOf,
} from '../../shared/domain/repository/block-map.js';
import type {
  BlobId,
  BlockSource,
  Repository,
  RepositoryWriter,
  SnapshotManifest,
  WriteStats,
} from '../../shared/ports/repository.js';
import { EBS_BLOCK_SIZE, type SnapshotBlocks } from '../../shared/ports/snapshot-blocks.js';
import { blocksToRead, type ParentChunk, parentChunks } from './block-sources.js';
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

const encoder = new TextEncoder();

interface OpenRange {
  readonly range: number;
  readonly parent?: ParentChunk;
  readonly changes: BlockChange[];
  pending: number;
  closed: boolean;
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
  const parent = options.parentManifestId
    ? await parentManifestOf(repository, options.parentManifestId, signal)
    : undefined;
  const parentManifestId = parent ? options.parentManifestId : undefined;
  const saved = await options.checkpoints?.load();
  const checkpoint =
    saved && saved.snapshotId === snapshotId && saved.parentManifestId === parentManifestId
      ? saved
      : undefined;
  const startRange = checkpoint?.nextRange ?? 0;
  const startIndex = startRange * BLOCK_MAP_RANGE;

  const listing = await blocksToRead({
    blocks,
    snapshotId,
    ...(parent ? { parentSnapshotId: parent.source.snapshotId } : {}),
    startIndex,
    signal,
  });
  const { incremental, state: listed } = listing;
  const items = listing.items;

  const pool = new TaskPool({ limit: options.concurrency ?? 32, ...(signal ? { signal } : {}) });
  const chunks: BlobId[] = [...(checkpoint?.chunks ?? [])];
  let totalBytes = checkpoint?.totalBytes ?? 0;
  let blocksRead = 0;
  let bytesRead = 0;
  let blocksDone = 0;
  const open: OpenRange[] = [];
  // An incremental starts from the parent's map; a full read (also a fallback) from nothing.
  const parents =
    parent && incremental
      ? parentChunks({ repository, chunkIds: parent.blockMap, fromRange: startRange, signal })
      : undefined;
  let nextParent: ParentChunk | undefined = parents ? (await parents.next()).value : undefined;
  let lastCheckpoint = Date.now();
  let finishedRanges = startRange;

  const report = (): void =>
    options.onProgress?.({
      bytesDone: blocksDone * EBS_BLOCK_SIZE,
      bytesTotal: listed.listed * EBS_BLOCK_SIZE,
      totalKnown: listed.done,
      blocksDone,
      blocksTotal: listed.listed,
    });

  /** The open range for `range`, opening ranges the parent has before it as they are. */
  const rangeFor = async (range: number): Promise<OpenRange> => {
    for (const r of open) if (r.range < range) r.closed = true;
    while (nextParent && nextParent.range < range) {
      open.push({ range: nextParent.range, parent: nextParent, changes: [], pending: 0, closed: true });
      nextParent = parents ? (await parents.next()).value : undefined;
    }
    const last = open.at(-1);
    if (last && last.range === range) return last;
    const here = nextParent?.range === range ? nextParent : undefined;
    if (here) nextParent = parents ? (await parents.next()).value : undefined;
    const opened: OpenRange = {
      range,
      ...(here ? { parent: here } : {}),
      changes: [],
      pending: 0,
      closed: false,
    };
    open.push(opened);
    return opened;
  };

  /** Writes the map chunks of finished ranges, in order, and checkpoints now and then. */
  const finishReady = async (): Promise<void> => {
    let finished = false;
    for (let head = open[0]; head?.closed && head.pending === 0; head = open[0]) {
      open.shift();
      const entries =
        head.changes.length === 0
          ? (head.parent?.entries ?? [])
          : mergeBlockRange({ parent: head.parent?.entries ?? [], changes: head.changes });
      if (entries.length > 0) {
        if (head.changes.length === 0 && head.parent) chunks.push(head.parent.blobId);
        else {
          const written = await writer.putBlob(encoder.encode(encodeBlockMapChunk(entries)), {
            signal: pool.signal,
          });
          chunks.push(written.id);
        }
      }
      totalBytes += entries.length * EBS_BLOCK_SIZE;
      finishedRanges = head.range + 1;
      finished = true;
    }
    const every = options.checkpointEveryMs ?? 30_000;
    if (finished && options.checkpoints && Date.now() - lastCheckpoint >= every) {
      await saveCheckpoint();
    }
  };

  const saveCheckpoint = async (): Promise<void> => {
    if (!options.checkpoints) return;
    await writer.flush({ signal: pool.signal });
    await options.checkpoints.save({
      snapshotId,
      ...(parentManifestId ? { parentManifestId } : {}),
      nextRange: finishedRanges,
      chunks: [...chunks],
      totalBytes,
      blocksRead: (checkpoint?.blocksRead ?? 0) + blocksRead,
      bytesRead: (checkpoint?.bytesRead ?? 0) + bytesRead,
      writes: addStats(checkpoint?.writes ?? emptyStats, writer.stats()),
    });
    lastCheckpoint = Date.now();
  };

  try {
    for (let item = await items.next(); !item.done; item = await items.next()) {
      const { index, token } = item.value;
      const range = await rangeFor(rangeOf(index));
      if (token === null) {
        range.changes.push({ index, blobId: null });
        blocksDone++;
        report();
      } else {
        range.pending++;
        await pool.run(async (taskSignal) => {
          const { data, sha256 } = await blocks.getSnapshotBlock({
            snapshotId,
            blockIndex: index,
            blockToken: token,
            signal: taskSignal,
          });
          blocksRead++;
          bytesRead += data.length;
          // The SHA-256 checked against EBS's checksum gives the blob id: the block is hashed once.
          const blobId = isAllZero(data)
            ? null
            : (await writer.putBlob(data, { signal: taskSignal, sha256 })).id;
          range.changes.push({ index, blobId });
          range.pending--;
          blocksDone++;
          report();
        });
      }
      await finishReady();
    }
    await pool.drain();
    for (const r of open) r.closed = true;
    // The parent's ranges after the last change stay as they are.
    while (nextParent) {
      open.push({ range: nextParent.range, parent: nextParent, changes: [], pending: 0, closed: true });
      nextParent = parents ? (await parents.next()).value : undefined;
    }
    await finishReady();
    listed.done = true;
    report();
    await writer.flush(signal ? { signal } : {});
  } catch (error) {
    await pool.abort(error);
    throw error;
  }

  const writes = addStats(checkpoint?.writes ?? emptyStats, writer.stats());
  const volumeSizeBytes =
    (listed.volumeSizeGiB || (parent ? parent.volumeSizeBytes / 1024 ** 3 : 0)) * 1024 ** 3;
  const manifest: SnapshotManifest & { kind: 'block' } = {
    kind: 'block',
    id: options.manifestId,
    createdAt: now().toISOString(),
    tags: options.tags ?? {},
    source: { ...(options.source ?? {}), snapshotId },
    volumeSizeBytes,
    blockSizeBytes: EBS_BLOCK_SIZE,
    blockMap: chunks,
    ...(incremental && parentManifestId ? { parent: parentManifestId } : {}),
    stats: {
      totalBytes,
      bytesRead: (checkpoint?.bytesRead ?? 0) + bytesRead,
      blocksRead: (checkpoint?.blocksRead ?? 0) + blocksRead,
      rawBytesStored: writes.rawBytes,
      storedBytes: writes.storedBytes,
      blobsDeduplicated: writes.blobsDeduplicated,
    },
  };
  await repository.writeManifest(manifest, signal ? { signal } : {});
  return { manifest, incremental, run: { blocksRead, bytesRead, resumedAtBlock: startIndex } };
}
