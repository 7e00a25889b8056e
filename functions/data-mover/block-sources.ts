/**
 * What a block-mode backup reads: the blocks EBS lists for a snapshot (every block with data), or,
 * against an earlier snapshot of the same volume, the blocks ListChangedBlocks names; and the
 * parent manifest's block-map chunks. Both are read lazily, page by page and chunk by chunk, so
 * memory does not grow with the volume. Never guesses: a snapshot whose blocks are not 512 KiB is
 * refused.
 */

import { CloudRequestRefused } from '../../shared/domain/errors.js';
import { type BlockMapEntry, parseBlockMapChunk, rangeOf } from '../../shared/domain/repository/block-map.js';
import type { BlobId, Repository } from '../../shared/ports/repository.js';
import {
  type BlockPage,
  type ChangedBlockRef,
  EBS_BLOCK_SIZE,
  type SnapshotBlocks,
} from '../../shared/ports/snapshot-blocks.js';

/** A block to read (its token), or one to drop from the map: it now reads as zeros (null). */
export interface WorkItem {
  readonly index: number;
  readonly token: string | null;
}

/** What the listing has seen so far; `done` once its last page is read. */
export interface ListingState {
  volumeSizeGiB: number;
  listed: number;
  done: boolean;
}

export interface BlockListing {
  readonly items: AsyncGenerator<WorkItem>;
  /** False without a parent, or when EBS could not compare against it (everything is read). */
  readonly incremental: boolean;
  readonly state: ListingState;
}

export interface ParentChunk {
  readonly range: number;
  readonly blobId: BlobId;
  readonly entries: readonly BlockMapEntry[];
}

function checkBlockSize(blockSizeBytes: number): void {
  if (blockSizeBytes !== EBS_BLOCK_SIZE)
    throw new CloudRequestRefused(`the snapshot has ${blockSizeBytes}-byte blocks, not ${EBS_BLOCK_SIZE}`, {
      code: 'UnexpectedBlockSize',
    });
}

/**
 * The blocks to read from `startIndex` on. With a parent snapshot, the changed ones; when EBS
 * refuses to compare (the parent snapshot deleted, or of another lineage), all of them.
 */
export async function blocksToRead(options: {
  blocks: SnapshotBlocks;
  snapshotId: string;
  parentSnapshotId?: string;
  startIndex: number;
  signal?: AbortSignal | undefined;
}): Promise<BlockListing> {
  const { blocks, snapshotId, startIndex, signal } = options;
  const state: ListingState = { volumeSizeGiB: 0, listed: 0, done: false };
  const withSignal = signal ? { signal } : {};
  const seen = (page: BlockPage<unknown>): void => {
    checkBlockSize(page.blockSizeBytes);
    state.volumeSizeGiB = page.volumeSizeGiB;
    state.listed += page.blocks.length;
  };
  if (options.parentSnapshotId) {
    const changed = blocks
      .listChangedBlocks({
        firstSnapshotId: options.parentSnapshotId,
        secondSnapshotId: snapshotId,
        startingBlockIndex: startIndex,
        ...withSignal,
      })
      [Symbol.asyncIterator]();
    let first: IteratorResult<BlockPage<ChangedBlockRef>, unknown> | undefined;
    try {
      first = await changed.next();
    } catch (error) {
      if (!(error instanceof CloudRequestRefused)) throw error;
    }
    if (first) {
      const start = first;
      const items = async function* (): AsyncGenerator<WorkItem> {
        for (let page = start; !page.done; page = await changed.next()) {
          seen(page.value);
          for (const b of page.value.blocks) yield { index: b.index, token: b.secondToken ?? null };
        }
        state.done = true;
      };
      return { items: items(), incremental: true, state };
    }
  }
  const items = async function* (): AsyncGenerator<WorkItem> {
    for await (const page of blocks.listSnapshotBlocks({
      snapshotId,
      startingBlockIndex: startIndex,
      ...withSignal,
    })) {
      seen(page);
      for (const b of page.blocks) yield { index: b.index, token: b.token };
    }
    state.done = true;
  };
  return { items: items(), incremental: false, state };
}

const decoder = new TextDecoder();

/** The parent's map chunks in order, read one at a time, from `fromRange` on. */
export async function* parentChunks(options: {
  repository: Repository;
  chunkIds: readonly BlobId[];
  fromRange: number;
  signal?: AbortSignal | undefined;
}): AsyncGenerator<ParentChunk> {
  for (const blobId of options.chunkIds) {
    const data = await options.repository.getBlob(blobId, options.signal ? { signal: options.signal } : {});
    const entries = parseBlockMapChunk(decoder.decode(data));
    const first = entries[0];
    if (!first) continue;
    const range = rangeOf(first[0]);
    if (range >= options.fromRange) yield { range, blobId, entries };
  }
}
