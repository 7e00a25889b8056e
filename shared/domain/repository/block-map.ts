/**
 * The block map of a block-mode snapshot manifest: which blob holds each non-empty block of a
 * volume. It is cut into chunks by fixed ranges of block indexes (BLOCK_MAP_RANGE blocks each), so
 * a chunk's content depends only on its range: an incremental backup rewrites just the chunks of
 * ranges with changed blocks, and the others are the parent's blobs again (deduplicated). Each
 * chunk is a JSON array of `[blockIndex, blobId]` pairs, ascending (docs/repository-format.md).
 * Pure: no I/O; a malformed chunk is refused with BlockMapInvalid, never guessed at.
 */
import { LifeboatError } from '../errors.js';

/** Blocks per block-map chunk: 4,096 blocks of 512 KiB cover 2 GiB; a chunk stays under ~300 KB. */
export const BLOCK_MAP_RANGE = 4096;

export type BlockMapEntry = readonly [blockIndex: number, blobId: string];

/** A block read in this run: its new blob, or null when it now reads as zeros (no blob). */
export interface BlockChange {
  readonly index: number;
  readonly blobId: string | null;
}

export class BlockMapInvalid extends LifeboatError {
  constructor(message: string) {
    super(`block map: ${message}`);
    this.name = 'BlockMapInvalid';
  }
}

export const rangeOf = (blockIndex: number, rangeSize: number = BLOCK_MAP_RANGE): number =>
  Math.floor(blockIndex / rangeSize);

const BLOB_ID = /^[0-9a-f]{16,128}$/;

function checkChunk(entries: readonly BlockMapEntry[], rangeSize: number): void {
  let previous = -1;
  let range: number | undefined;
  for (const [index, blobId] of entries) {
    if (!Number.isSafeInteger(index) || index < 0)
      throw new BlockMapInvalid(`block index ${index} is not valid`);
    if (index <= previous)
      throw new BlockMapInvalid(`block ${index} follows block ${previous}: not ascending`);
    if (typeof blobId !== 'string' || !BLOB_ID.test(blobId))
      throw new BlockMapInvalid(`block ${index} names no valid blob id`);
    const r = rangeOf(index, rangeSize);
    if (range !== undefined && r !== range)
      throw new BlockMapInvalid(`block ${index} lies outside the chunk's range ${range}`);
    range = r;
    previous = index;
  }
}

/** The chunk's text; refuses entries that are not ascending, unique and of one range. */
export function encodeBlockMapChunk(
  entries: readonly BlockMapEntry[],
  options: { rangeSize?: number } = {},
): string {
  if (entries.length === 0) throw new BlockMapInvalid('a chunk holds at least one block');
  checkChunk(entries, options.rangeSize ?? BLOCK_MAP_RANGE);
  return JSON.stringify(entries);
}

/** A chunk read back, checked as strictly as it was written. */
export function parseBlockMapChunk(
  text: string,
  options: { rangeSize?: number } = {},
): readonly BlockMapEntry[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BlockMapInvalid('a chunk is not JSON');
  }
  if (!Array.isArray(value) || value.length === 0)
    throw new BlockMapInvalid('a chunk is not a non-empty array');
  const entries: BlockMapEntry[] = [];
  for (const item of value) {
    if (!Array.isArray(item) || item.length !== 2 || typeof item[0] !== 'number')
      throw new BlockMapInvalid('a chunk entry is not a [blockIndex, blobId] pair');
    entries.push([item[0], item[1] as string]);
  }
  checkChunk(entries, options.rangeSize ?? BLOCK_MAP_RANGE);
  return entries;
}

/**
 * One range's entries after an incremental read: the parent's entries, with every changed block
 * taking its new blob or, when it now holds only zeros, leaving the map. Changes may come in any
 * order; each index at most once.
 */
export function mergeBlockRange(options: {
  parent: readonly BlockMapEntry[];
  changes: readonly BlockChange[];
}): BlockMapEntry[] {
  const changed = new Map<number, string | null>();
  for (const change of options.changes) {
    if (changed.has(change.index)) throw new BlockMapInvalid(`block ${change.index} changed twice`);
    changed.set(change.index, change.blobId);
  }
  const merged: BlockMapEntry[] = [];
  for (const [index, blobId] of options.parent) {
    if (!changed.has(index)) merged.push([index, blobId]);
  }
  for (const [index, blobId] of changed) if (blobId !== null) merged.push([index, blobId]);
  return merged.sort((a, b) => a[0] - b[0]);
}

/** The volume size in whole GiB that a restored snapshot needs (StartSnapshot takes GiB). */
export function volumeSizeGiB(volumeSizeBytes: number): number {
  return Math.max(1, Math.ceil(volumeSizeBytes / 1024 ** 3));
}
