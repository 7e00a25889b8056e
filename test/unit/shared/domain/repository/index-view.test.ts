import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toHex } from '../../../../../shared/domain/repository/bytes.js';
import { mergeLevels, mergeSegments } from '../../../../../shared/domain/repository/index-merge.js';
import {
  decodeIndex,
  encodeIndex,
  type IndexSegment,
  locationsOf,
  lookupInSegment,
  segmentOfPacks,
} from '../../../../../shared/domain/repository/index-segment.js';
import { IndexView } from '../../../../../shared/domain/repository/index-view.js';
import { type PackEntry, PackFormatError } from '../../../../../shared/domain/repository/pack.js';

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

/** Few packs and few blob ids, so one blob is often in several packs (and a pack in several lists). */
const smallPackId = (n: number): string => n.toString(16).padStart(32, '0');
const crowdedPacks = fc.uniqueArray(
  fc.record({
    pack: fc.nat({ max: 5 }).map((n) => ({ id: smallPackId(n), bytes: 1000 + n })),
    entries: fc.uniqueArray(
      fc.nat({ max: 11 }).map((n) => ({
        id: n.toString(16).padStart(64, '0'),
        offset: n,
        length: 1,
        rawLength: 1,
        compressed: false,
      })),
      { selector: (e) => e.id, maxLength: 6 },
    ),
  }),
  { selector: (p) => p.pack.id, maxLength: 4 },
);

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

  it('merge into levels that keep every location of a blob in a pack not excluded, once a pack', () => {
    fc.assert(
      fc.property(
        fc.array(crowdedPacks, { minLength: 1, maxLength: 4 }),
        fc.uniqueArray(fc.nat({ max: 5 })),
        fc.uniqueArray(fc.nat({ max: 5 })),
        fc.boolean(),
        (batches, excluded, demoted, firstReplaces) => {
          const segments = batches.map(segmentOfPacks);
          const first = segments[0] as IndexSegment;
          const exclude = new Set(excluded.map(smallPackId));
          const demote = new Set(demoted.map(smallPackId));
          const levels = mergeLevels({ segments, excludePacks: exclude, demotePacks: demote, firstReplaces });
          for (const l of levels) expect(decodeIndex(encodeIndex(l))).toEqual(l); // sorted, ids once
          // Every (blob, pack) the inputs hold, less the excluded packs, exactly once; with
          // firstReplaces, a blob the first segment places keeps that location alone.
          const wanted = new Map<string, Set<string>>();
          for (const seg of segments)
            for (const l of locationsOf(seg)) {
              if (exclude.has(l.packId)) continue;
              const alone = firstReplaces ? lookupInSegment(first, l.id) : undefined;
              if (alone && !exclude.has(alone.packId) && alone.packId !== l.packId) continue;
              wanted.set(l.id, (wanted.get(l.id) ?? new Set()).add(l.packId));
            }
          const got = levels.flatMap((l) => [...locationsOf(l)]);
          expect(got.map((l) => `${l.id}/${l.packId}`).sort()).toEqual(
            [...wanted].flatMap(([blob, ps]) => [...ps].map((p) => `${blob}/${p}`)).sort(),
          );
          // Level 0 holds one location of every blob, in a pack not demoted where it has one.
          const level0 = [...locationsOf(levels[0] as IndexSegment)];
          expect(level0.map((l) => l.id)).toEqual([...wanted.keys()].sort());
          for (const l of level0)
            if (demote.has(l.packId))
              expect([...(wanted.get(l.id) ?? [])].every((p) => demote.has(p))).toBe(true);
          expect(mergeSegments({ segments, excludePacks: exclude, demotePacks: demote })).toEqual(
            mergeLevels({ segments, excludePacks: exclude, demotePacks: demote, maxLevels: 1 })[0],
          );
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

  it('keeps every location of a blob stored in several packs, whatever merges it made', () => {
    fc.assert(
      fc.property(
        fc.array(crowdedPacks, { maxLength: 12 }),
        fc.uniqueArray(fc.nat({ max: 5 })),
        (batches, cut) => {
          const view = new IndexView();
          for (const batch of batches) view.add(segmentOfPacks(batch));
          // Where each blob is, one location a pack (the first loaded of a pack listed twice).
          const where = new Map<string, Set<string>>();
          for (const batch of batches)
            for (const l of locationsOf(segmentOfPacks(batch)))
              where.set(l.id, (where.get(l.id) ?? new Set()).add(l.packId));
          for (const [blob, packIds] of where) {
            const found = view.locationsOf(blob);
            expect(found[0]).toEqual(view.lookup(blob));
            expect(new Set(found.map((l) => l.packId))).toEqual(packIds);
          }
          // Packs excluded before a location is chosen lose only blobs all of whose packs go.
          const exclude = new Set(cut.map(smallPackId));
          const merged = view.merged(exclude);
          const kept = [...where].filter(([, ps]) => [...ps].some((p) => !exclude.has(p))).map(([b]) => b);
          expect([...locationsOf(merged)].map((l) => l.id)).toEqual(kept.sort());
          for (const l of locationsOf(merged)) expect(exclude.has(l.packId)).toBe(false);
          const levels = view.levels({ excludePacks: exclude });
          expect(levels.reduce((n, l) => n + l.count, 0)).toBe(
            [...where.values()].reduce((n, ps) => n + [...ps].filter((p) => !exclude.has(p)).length, 0),
          );
        },
      ),
    );
  });

  it('keeps the locations of a blob stored in many packs through many merges', () => {
    const view = new IndexView();
    const blob = 'ab'.repeat(32);
    const packIds = Array.from({ length: 40 }, (_, i) => (i + 1).toString(16).padStart(32, '0'));
    for (const [i, id] of packIds.entries())
      view.add(
        segmentOfPacks([
          {
            pack: { id, bytes: 100 },
            entries: [
              { id: blob, offset: i, length: 1, rawLength: 1, compressed: false },
              {
                id: i.toString(16).padStart(64, '0'),
                offset: 50,
                length: 1,
                rawLength: 1,
                compressed: false,
              },
            ],
          },
        ]),
      );
    expect(view.lookup(blob)?.packId).toBe(packIds.at(-1)); // the newest loaded is searched first
    expect(new Set(view.locationsOf(blob).map((l) => l.packId))).toEqual(new Set(packIds));
    const levels = view.levels({ excludePacks: new Set(packIds.slice(1)) });
    expect([...locationsOf(levels[0] as IndexSegment)].find((l) => l.id === blob)?.packId).toBe(packIds[0]);
    expect(view.levels().filter((l) => lookupInSegment(l, blob))).toHaveLength(40);
  });
});
