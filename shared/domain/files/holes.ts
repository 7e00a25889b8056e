/**
 * Holes of sparse files. Node has no SEEK_HOLE/SEEK_DATA, so a file whose allocated blocks are
 * fewer than its size has its holes found by reading: every aligned block of zeros is taken for a
 * hole, and the restore leaves it unwritten. Content is the same either way; only zero blocks
 * that were allocated in the source come back as holes. Pure: no I/O.
 */

/** A run of a read buffer: `hole` runs are all zero and may be left unwritten. */
export interface ByteRun {
  readonly start: number;
  readonly end: number;
  readonly hole: boolean;
}

function isZero(data: Uint8Array, start: number, end: number): boolean {
  let i = start;
  // Four bytes at a time where the buffer's alignment allows a 32-bit view.
  if ((data.byteOffset + i) % 4 === 0) {
    const words = Math.floor((end - i) / 4);
    const view = new Uint32Array(data.buffer, data.byteOffset + i, words);
    for (let w = 0; w < words; w++) if (view[w] !== 0) return false;
    i += words * 4;
  }
  for (; i < end; i++) if (data[i] !== 0) return false;
  return true;
}

/**
 * Splits `data` into alternating data and hole runs at `blockSize` boundaries (the buffer starts
 * at a block boundary of the file). A short last block is a hole when it is all zeros (the end
 * of a file, which truncating to the size restores).
 */
export function zeroBlockRuns(data: Uint8Array, blockSize: number): ByteRun[] {
  if (!Number.isInteger(blockSize) || blockSize < 1) throw new RangeError(`invalid block size ${blockSize}`);
  const runs: ByteRun[] = [];
  for (let start = 0; start < data.length; start += blockSize) {
    const end = Math.min(data.length, start + blockSize);
    const hole = isZero(data, start, end);
    const last = runs[runs.length - 1];
    if (last && last.hole === hole) runs[runs.length - 1] = { start: last.start, end, hole };
    else runs.push({ start, end, hole });
  }
  return runs;
}
