import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BLOCK_MAP_RANGE,
  type BlockChange,
  type BlockMapEntry,
  BlockMapInvalid,
  encodeBlockMapChunk,
  mergeBlockRange,
  parseBlockMapChunk,
  rangeOf,
  volumeSizeGiB,
} from '../../../../../shared/domain/repository/block-map.js';

const blob = (n: number): string => n.toString(16).padStart(64, '0');

describe('block-map chunks', () => {
  it('round-trips ascending entries of one range as JSON pairs', () => {
    const entries: BlockMapEntry[] = [
      [4096, blob(1)],
      [4100, blob(2)],
      [8191, blob(1)],
    ];
    const text = encodeBlockMapChunk(entries);
    expect(JSON.parse(text)).toEqual(entries);
    expect(parseBlockMapChunk(text)).toEqual(entries);
  });

  it.each([
    [
      'not ascending',
      [
        [5, blob(1)],
        [3, blob(2)],
      ],
    ],
    [
      'a repeated block',
      [
        [5, blob(1)],
        [5, blob(2)],
      ],
    ],
    [
      'blocks of two ranges',
      [
        [BLOCK_MAP_RANGE - 1, blob(1)],
        [BLOCK_MAP_RANGE, blob(2)],
      ],
    ],
    ['a negative index', [[-1, blob(1)]]],
    ['a blob id that is not hex', [[1, 'Z'.repeat(64)]]],
    ['no entries', []],
  ])('refuses a chunk with %s', (_, entries) => {
    expect(() => encodeBlockMapChunk(entries as unknown as BlockMapEntry[])).toThrow(BlockMapInvalid);
    expect(() => parseBlockMapChunk(JSON.stringify(entries))).toThrow(BlockMapInvalid);
  });

  it.each([
    ['text that is not JSON', '[[1,'],
    ['an object', '{"1":"a"}'],
    ['a triple', `[[1,"${blob(1)}",2]]`],
    ['an index given as text', `[["1","${blob(1)}"]]`],
  ])('refuses to parse %s', (_, text) => {
    expect(() => parseBlockMapChunk(text)).toThrow(BlockMapInvalid);
  });

  it('puts a block in the range of its index', () => {
    expect(rangeOf(0)).toBe(0);
    expect(rangeOf(BLOCK_MAP_RANGE - 1)).toBe(0);
    expect(rangeOf(BLOCK_MAP_RANGE)).toBe(1);
    expect(rangeOf(10, 4)).toBe(2);
  });

  it('sizes a restored volume in whole GiB, at least one', () => {
    expect(volumeSizeGiB(8 * 1024 ** 3)).toBe(8);
    expect(volumeSizeGiB(8 * 1024 ** 3 + 1)).toBe(9);
    expect(volumeSizeGiB(0)).toBe(1);
  });
});

describe('merging an incremental read into the parent’s range', () => {
  it('keeps unchanged blocks, takes new blobs, drops blocks that now read as zeros, adds new ones', () => {
    const merged = mergeBlockRange({
      parent: [
        [1, blob(1)],
        [2, blob(2)],
        [3, blob(3)],
      ],
      changes: [
        { index: 7, blobId: blob(7) },
        { index: 2, blobId: null },
        { index: 3, blobId: blob(33) },
        { index: 5, blobId: null },
      ],
    });
    expect(merged).toEqual([
      [1, blob(1)],
      [3, blob(33)],
      [7, blob(7)],
    ]);
  });

  it('refuses a block changed twice', () => {
    expect(() =>
      mergeBlockRange({
        parent: [],
        changes: [
          { index: 1, blobId: blob(1) },
          { index: 1, blobId: blob(2) },
        ],
      }),
    ).toThrow(BlockMapInvalid);
  });

  it('equals the volume after the changes, whatever their order (property)', () => {
    const volume = fc.dictionary(
      fc.integer({ min: 0, max: 63 }).map(String),
      fc.option(fc.integer({ min: 1, max: 5 }), { nil: null }),
    );
    fc.assert(
      fc.property(volume, volume, fc.boolean(), (before, after, reverse) => {
        // A block with null reads as zeros. The parent maps `before`; the changes are what differs.
        const parent: BlockMapEntry[] = Object.entries(before)
          .filter(([, v]) => v !== null)
          .map(([k, v]) => [Number(k), blob(v as number)] as const)
          .sort((a, b) => a[0] - b[0]);
        const indexes = new Set([...Object.keys(before), ...Object.keys(after)].map(Number));
        const changes: BlockChange[] = [];
        for (const i of indexes) {
          const a = before[String(i)] ?? null;
          const b = after[String(i)] ?? null;
          if (a !== b) changes.push({ index: i, blobId: b === null ? null : blob(b) });
        }
        if (reverse) changes.reverse();
        const expected = [...indexes]
          .filter((i) => (after[String(i)] ?? null) !== null)
          .sort((x, y) => x - y)
          .map((i) => [i, blob(after[String(i)] as number)]);
        const merged = mergeBlockRange({ parent, changes });
        expect(merged).toEqual(expected);
        if (merged.length > 0) expect(parseBlockMapChunk(encodeBlockMapChunk(merged))).toEqual(merged);
      }),
    );
  });
});
