import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { zeroBlockRuns } from '../../../../../shared/domain/files/holes.js';

describe('holes of sparse files', () => {
  it('marks aligned all-zero blocks as holes and merges neighbours', () => {
    const data = new Uint8Array(5 * 4096);
    data[4096 + 17] = 1;
    data[4 * 4096] = 9;
    expect(zeroBlockRuns(data, 4096)).toEqual([
      { start: 0, end: 4096, hole: true },
      { start: 4096, end: 8192, hole: false },
      { start: 8192, end: 16384, hole: true },
      { start: 16384, end: 20480, hole: false },
    ]);
  });

  it('takes a short zero block at the end for a hole, a short one with data for data', () => {
    expect(zeroBlockRuns(new Uint8Array(4096 + 100), 4096)).toEqual([{ start: 0, end: 4196, hole: true }]);
    const tail = new Uint8Array(4096 + 100);
    tail[4100] = 1;
    expect(zeroBlockRuns(tail, 4096)).toEqual([
      { start: 0, end: 4096, hole: true },
      { start: 4096, end: 4196, hole: false },
    ]);
  });

  it('covers the buffer exactly, alternating, holes all zero and data blocks not, at any alignment', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 5 })), { maxLength: 12 }),
        fc.integer({ min: 0, max: 7 }),
        fc.integer({ min: 1, max: 64 }),
        (blocks, shift, blockSize) => {
          const length = blocks.reduce((n, [, count]) => n + count * blockSize, 0);
          const backing = new Uint8Array(length + shift);
          const data = backing.subarray(shift);
          let at = 0;
          for (const [filled, count] of blocks) {
            if (filled) for (let b = 0; b < count; b++) data[at + b * blockSize + ((b * 7) % blockSize)] = 1;
            at += count * blockSize;
          }
          const runs = zeroBlockRuns(data, blockSize);
          expect(runs.map((r) => r.end - r.start).reduce((a, b) => a + b, 0)).toBe(data.length);
          for (const [i, run] of runs.entries()) {
            if (i > 0) expect(runs[i - 1]?.end).toBe(run.start);
            if (i > 0) expect(runs[i - 1]?.hole).not.toBe(run.hole);
            const slice = data.subarray(run.start, run.end);
            if (run.hole) expect(slice.every((b) => b === 0)).toBe(true);
            else
              for (let s = 0; s < slice.length; s += blockSize)
                expect(slice.subarray(s, s + blockSize).some((b) => b !== 0)).toBe(true);
          }
        },
      ),
    );
  });
});
