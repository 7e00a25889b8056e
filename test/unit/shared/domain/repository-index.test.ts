import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toHex } from '../../../../shared/domain/repository-bytes.js';
import {
  decodeIndex,
  encodeIndex,
  IndexView,
  locationsOf,
  lookupInSegment,
  mergeSegments,
  segmentOfPacks,
} from '../../../../shared/domain/repository-index.js';
import { type PackEntry, PackFormatError } from '../../../../shared/domain/repository-pack.js';

const hex = (bytes: number) => fc.uint8Array({ minLength: bytes, maxLength: bytes }).map(toHex);
const entry: fc.Arbitrary<PackEntry> = fc.record({
  id: hex(32),
  offset: fc.nat({ max: 2 ** 32 - 1 }),
  length: fc.nat({ max: 2 ** 32 - 1 }),
  rawLength: fc.nat({ max: 2 ** 32 - 1 }),
  compressed: fc.boolean(),
});
const pack = fc.record({
  pack: fc.record({ id: hex(16), bytes: fc.nat({ max: 2 ** 32 - 1 }) }),
  entries: fc.array(entry, { maxLength: 20 }),
});
/** Packs with distinct ids, as a repository has. */
const packs = fc.uniqueArray(pack, { selector: (p) => p.pack.id, maxLength: 8 });

describe('index segments', () => {
  it('find every blob of their packs, and survive encoding', () => {
    fc.assert(
      fc.property(packs, (ps) => {
        const segment = decodeIndex(encodeIndex(segmentOfPacks(ps)));
        for (const p of ps)
          for (const e of p.entries) {
            const found = lookupInSegment(segment, e.id);
            expect(found).toBeDefined();
            // A blob stored twice is found at one of its locations.
            const candidates = ps.flatMap((q) =>
              q.entries.filter((x) => x.id === e.id).map((x) => ({ ...x, packId: q.pack.id })),
            );
            expect(candidates).toContainEqual(found);
          }
        const ids = [...locationsOf(segment)].map((l) => l.id);
        expect(ids).toEqual([...new Set(ps.flatMap((p) => p.entries.map((e) => e.id)))].sort());
      }),
    );
  });

  it('merge to the union of their blobs, less the excluded packs', () => {
    fc.assert(
      fc.property(
        packs,
        fc.nat({ max: 3 }),
        fc.array(fc.boolean(), { maxLength: 8 }),
        (ps, cut, excluded) => {
          const first = segmentOfPacks(ps.slice(0, cut));
          const second = segmentOfPacks(ps.slice(cut));
          const exclude = new Set(ps.filter((_, i) => excluded[i]).map((p) => p.pack.id));
          const merged = mergeSegments({ segments: [first, second], excludePacks: exclude });
          const expected = new Set(
            ps.flatMap((p) => p.entries.map((e) => ({ id: e.id, packId: p.pack.id }))).map((x) => x.id),
          );
          const got = [...locationsOf(merged)];
          for (const l of got) expect(exclude.has(l.packId)).toBe(false);
          // Every id whose packs are not all excluded is kept.
          const kept = [...expected].filter((id) =>
            ps.some((p) => !exclude.has(p.pack.id) && p.entries.some((e) => e.id === id)),
          );
          expect(got.map((l) => l.id)).toEqual(kept.sort());
          expect(merged.packs.map((p) => p.id).sort()).toEqual(
            ps
              .map((p) => p.pack.id)
              .filter((id) => !exclude.has(id))
              .sort(),
          );
          expect(decodeIndex(encodeIndex(merged))).toEqual(merged);
        },
      ),
    );
  });

  it('are refused when their records are out of order', () => {
    const segment = segmentOfPacks([
      {
        pack: { id: '00'.repeat(16), bytes: 10 },
        entries: [
          { id: '01'.repeat(32), offset: 1, length: 1, rawLength: 1, compressed: false },
          { id: '02'.repeat(32), offset: 2, length: 1, rawLength: 1, compressed: false },
        ],
      },
    ]);
    const bytes = encodeIndex(segment);
    // Swap the two records' first id byte: the second now sorts before the first.
    const recordsAt = bytes.length - 2 * 49;
    bytes[recordsAt] = 2;
    bytes[recordsAt + 49] = 1;
    expect(() => decodeIndex(bytes)).toThrow(PackFormatError);
  });
});

describe('the index view', () => {
  it('finds every blob of many segments added one by one, with few segments searched', () => {
    fc.assert(
      fc.property(fc.array(packs, { maxLength: 12 }), (batches) => {
        const view = new IndexView();
        const seen = new Set<string>();
        for (const batch of batches) {
          const fresh = batch.filter((p) => !seen.has(p.pack.id));
          for (const p of fresh) seen.add(p.pack.id);
          view.add(segmentOfPacks(fresh));
        }
        for (const batch of batches)
          for (const p of batch) for (const e of p.entries) expect(view.lookup(e.id)).toBeDefined();
        expect(view.lookup('ff'.repeat(31))).toBeUndefined();
        const merged = view.merged();
        expect(view.segmentCount()).toBeLessThanOrEqual(
          Math.floor(Math.log2(Math.max(1, view.blobCount()))) + 1,
        );
        expect(merged.count).toBe(new Set(batches.flat().flatMap((p) => p.entries.map((e) => e.id))).size);
      }),
    );
  });
});
