import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BlobMarks,
  leaseIsLive,
  liveBlobsMissing,
  packsToCondemn,
  packsToRepack,
  planSweep,
} from '../../../../../shared/domain/repository/gc.js';
import { mergeSegments } from '../../../../../shared/domain/repository/index-merge.js';
import { lookupInSegment, segmentOfPacks } from '../../../../../shared/domain/repository/index-segment.js';
import { layoutPack } from '../../../../../shared/domain/repository/pack.js';

const id = (n: number): string => n.toString(16).padStart(64, '0');

const packId = (n: number): string => n.toString(16).padStart(32, '0');

describe('marking and condemning packs', () => {
  it('names the live blobs an index about to be written would lose', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uniqueArray(fc.nat({ max: 40 }), { maxLength: 8 }), { maxLength: 6 }),
        fc.uniqueArray(fc.nat({ max: 40 })),
        fc.uniqueArray(fc.nat({ max: 5 })),
        (blobsOfPacks, liveIds, dropped) => {
          const packs = blobsOfPacks.map((blobs, i) => ({
            pack: { id: packId(i), bytes: 1 },
            entries: blobs.map((b) => ({ id: id(b), offset: b, length: 1, rawLength: 1, compressed: false })),
          }));
          const inventory = segmentOfPacks(packs);
          const marks = new BlobMarks(inventory);
          for (const b of liveIds) marks.mark(id(b));
          // The next index: the same packs less some (their blobs gone unless another pack has them).
          const next = mergeSegments({ segments: [inventory], excludePacks: new Set(dropped.map(packId)) });
          const expected = liveIds
            .map(id)
            .filter((b) => lookupInSegment(inventory, b) && !lookupInSegment(next, b))
            .sort();
          expect(liveBlobsMissing({ marks, next })).toEqual(expected);
        },
      ),
    );
  });

  it('condemns every pack without a live blob, and keeps a copy of every live blob', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uniqueArray(fc.nat({ max: 30 }), { maxLength: 5 }), { maxLength: 10 }),
        fc.uniqueArray(fc.nat({ max: 30 })),
        fc.uniqueArray(fc.nat({ max: 9 })),
        (blobsOfPacks, liveIds, condemnedIdx) => {
          const packs = blobsOfPacks.map((blobs, i) => ({
            pack: { id: packId(i), bytes: i },
            entries: blobs.map((b, k) => ({
              id: id(b),
              offset: 100 + k,
              length: 1,
              rawLength: 1,
              compressed: false,
            })),
          }));
          const marks = new BlobMarks(segmentOfPacks(packs));
          for (const b of liveIds) marks.mark(id(b));
          const already = new Set(condemnedIdx.map(packId));
          const out = new Set(
            packsToCondemn({
              packs: marks.inventory.packs,
              livePacks: marks.livePacks(),
              alreadyCondemned: already,
            }).map((p) => p.id),
          );
          const live = new Set(liveIds.map(id));
          for (const p of packs) {
            const holdsLive = p.entries.some((e) => live.has(e.id));
            if (!holdsLive) expect(out.has(p.pack.id)).toBe(!already.has(p.pack.id));
            if (already.has(p.pack.id)) expect(out.has(p.pack.id)).toBe(false);
          }
          // A blob stored in several packs may let all but one go; never all of them.
          for (const b of live) {
            const holders = packs.filter((p) => p.entries.some((e) => e.id === b)).map((p) => p.pack.id);
            if (holders.length > 0) expect(holders.some((h) => !out.has(h))).toBe(true);
          }
          expect(marks.count()).toBe(
            [...live].filter((b) => packs.some((p) => p.entries.some((e) => e.id === b))).length,
          );
        },
      ),
    );
  });

  it('cannot mark a blob the inventory does not hold', () => {
    const marks = new BlobMarks(segmentOfPacks([]));
    expect(marks.mark(id(1))).toBe(false);
    expect(marks.isMarked(id(1))).toBe(false);
    expect(marks.count()).toBe(0);
  });
});

describe('choosing partly dead packs to repack', () => {
  const SEAL = 28;
  /** Packs laid out as a writer lays them out: blob `b` has a record of `lengths[b]` bytes. */
  function packsOf(blobsOfPacks: readonly (readonly number[])[], lengths: (b: number) => number) {
    return blobsOfPacks.map((blobs, i) => {
      const { entries, totalBytes } = layoutPack({
        records: blobs.map((b) => ({ id: id(b), sealedLength: lengths(b), rawLength: 1, compressed: false })),
        sealOverhead: SEAL,
      });
      return { pack: { id: packId(i), bytes: totalBytes }, entries };
    });
  }

  it('takes the packs at least that dead, with their live blobs, and never one whose blobs all live', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uniqueArray(fc.nat({ max: 40 }), { minLength: 1, maxLength: 6 }), { maxLength: 8 }),
        fc.uniqueArray(fc.nat({ max: 40 })),
        fc.double({ min: 0.01, max: 1, noNaN: true }),
        fc.uniqueArray(fc.nat({ max: 7 })),
        (blobsOfPacks, liveIds, fraction, ineligible) => {
          const packs = packsOf(blobsOfPacks, (b) => 100 + 37 * b);
          const marks = new BlobMarks(segmentOfPacks(packs));
          for (const b of liveIds) marks.mark(id(b));
          const excluded = new Set(ineligible.map(packId));
          const plans = packsToRepack({
            marks,
            eligible: (p) => !excluded.has(p),
            minDeadFraction: fraction,
            sealOverhead: SEAL,
          });
          const chosen = new Map(plans.map((p) => [p.pack.id, p]));
          for (const p of packs) {
            const plan = chosen.get(p.pack.id);
            // Marked, and placed here by the inventory (a blob in two packs counts for one): the
            // blobs to copy, in offset order.
            const live = p.entries.filter(
              (e) => marks.isMarked(e.id) && lookupInSegment(marks.inventory, e.id)?.packId === p.pack.id,
            );
            const compact = layoutPack({
              records: live.map((e) => ({ ...e, sealedLength: e.length })),
              sealOverhead: SEAL,
            }).totalBytes;
            const dead = p.pack.bytes - compact;
            const expected =
              live.length > 0 && !excluded.has(p.pack.id) && dead > 0 && dead >= fraction * p.pack.bytes;
            expect(plan !== undefined).toBe(expected);
            if (!plan) continue;
            expect(plan.deadBytes).toBe(dead);
            expect(plan.live.map((l) => l.id)).toEqual(live.map((e) => e.id));
            expect(plan.live.every((l) => l.packId === p.pack.id)).toBe(true);
          }
        },
      ),
    );
  });

  it('never chooses a pack whose blobs are all live, at any threshold', () => {
    const packs = packsOf([[1, 2, 3], [4]], () => 8220);
    const marks = new BlobMarks(segmentOfPacks(packs));
    for (const b of [1, 2, 3, 4]) marks.mark(id(b));
    expect(
      packsToRepack({ marks, eligible: () => true, minDeadFraction: Number.MIN_VALUE, sealOverhead: SEAL }),
    ).toEqual([]);
  });

  it('no longer counts a relocated blob for its old pack', () => {
    const packs = packsOf([[1, 2], [3]], () => 10);
    const marks = new BlobMarks(segmentOfPacks(packs));
    const relocated = new BlobMarks(marks.inventory);
    for (const b of [1, 3]) marks.mark(id(b));
    expect(marks.livePacks()).toEqual(new Set([packId(0), packId(1)]));
    relocated.mark(id(1));
    expect(marks.livePacks(relocated)).toEqual(new Set([packId(1)]));
    // Marked again (a manifest written meanwhile names it): still its copy's.
    marks.mark(id(1));
    expect(marks.livePacks(relocated)).toEqual(new Set([packId(1)]));
    // Another blob of the old pack marked meanwhile keeps it live.
    marks.mark(id(2));
    expect(marks.livePacks(relocated)).toEqual(new Set([packId(0), packId(1)]));
  });
});

describe('sweeping condemned packs', () => {
  const record = (recordId: string, packs: string[], blockers?: string[]) => ({
    recordId,
    packs: packs.map((p) => ({ id: p, bytes: 10 })),
    ...(blockers ? { blockers } : {}),
  });

  it('deletes only once every blocker has ended, and reprieves packs used again', () => {
    const plan = planSweep({
      records: [record('r1', ['a', 'b'], ['w1']), record('r2', ['c', 'd'], ['w2']), record('r3', ['e'])],
      liveWriters: new Set(['w2']),
      packHasLiveBlob: (p) => p === 'b',
    });
    expect(plan.deletions).toEqual([{ id: 'a', bytes: 10 }]);
    expect(plan.reprieved).toEqual(['b']);
    expect(plan.remaining.get('r1')).toEqual([]);
    expect(plan.remaining.get('r2')?.map((p) => p.id)).toEqual(['c', 'd']);
    // Blockers not listed yet (a collector stopped in between): wait, whatever the leases say.
    expect(plan.remaining.get('r3')?.map((p) => p.id)).toEqual(['e']);
  });

  it('never deletes a pack with a live blob, nor one a live writer blocks', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            packs: fc.uniqueArray(fc.nat({ max: 12 }), { maxLength: 4 }),
            blockers: fc.option(fc.uniqueArray(fc.nat({ max: 4 }), { maxLength: 3 }), { nil: undefined }),
          }),
          { maxLength: 6 },
        ),
        fc.uniqueArray(fc.nat({ max: 4 })),
        fc.uniqueArray(fc.nat({ max: 12 })),
        (records, live, livePacks) => {
          const rs = records.map((r, i) =>
            record(
              `r${i}`,
              r.packs.map((p) => `p${p}`),
              r.blockers?.map((b) => `w${b}`),
            ),
          );
          const liveWriters = new Set(live.map((w) => `w${w}`));
          const used = new Set(livePacks.map((p) => `p${p}`));
          const plan = planSweep({ records: rs, liveWriters, packHasLiveBlob: (p) => used.has(p) });
          for (const d of plan.deletions) {
            expect(used.has(d.id)).toBe(false);
            const from = rs.filter((r) => r.packs.some((p) => p.id === d.id));
            expect(
              from.some((r) => r.blockers !== undefined && !r.blockers.some((w) => liveWriters.has(w))),
            ).toBe(true);
          }
          expect(new Set(plan.deletions.map((d) => d.id)).size).toBe(plan.deletions.length);
        },
      ),
    );
  });
});

describe('leases', () => {
  it('count as live until the clock-skew allowance past their expiry', () => {
    const now = new Date('2026-01-01T00:10:00Z');
    expect(leaseIsLive({ expiresAt: '2026-01-01T00:09:00Z', now, skewMs: 120_000 })).toBe(true);
    expect(leaseIsLive({ expiresAt: '2026-01-01T00:07:59Z', now, skewMs: 120_000 })).toBe(false);
    expect(leaseIsLive({ expiresAt: 'not a time', now, skewMs: 0 })).toBe(true);
  });
});
