import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type GarbageCandidate, selectGarbage } from '../../../../../shared/domain/schedules/garbage.js';

const NOW = new Date('2026-06-01T00:00:00Z');
const at = (hoursAgo: number) => new Date(NOW.getTime() - hoursAgo * 3_600_000);

const candidate = (name: string, extra: Partial<GarbageCandidate> = {}): GarbageCandidate => ({
  name,
  phase: 'Completed',
  takenAt: at(1),
  deleting: false,
  ...extra,
});

describe('selectGarbage chooses what a GC run deletes, and says why', () => {
  it('deletes expired backups and skips the running, the deleting and the locked', () => {
    const decision = selectGarbage({
      backups: [
        candidate('expired', { expiration: at(1) }),
        candidate('fresh', { expiration: at(-1) }),
        candidate('running', { phase: 'InProgress', expiration: at(1) }),
        candidate('deleting', { deleting: true, expiration: at(1) }),
        candidate('locked', { expiration: at(1), retainedUntil: at(-24) }),
        candidate('lock-over', { expiration: at(2), retainedUntil: at(1) }),
      ],
      retention: new Map(),
      now: NOW,
    });
    expect(decision.delete.map((d) => d.name)).toEqual(['expired', 'lock-over']);
    expect(decision.delete[0]?.reasons[0]).toMatch(/^expired at /);
    expect(decision.skipped).toEqual([
      { name: 'deleting', reason: 'a deletion of it is running' },
      { name: 'locked', reason: `S3 Object Lock retains it until ${at(-24).toISOString()}` },
      { name: 'running', reason: 'it is still in progress (InProgress)' },
    ]);
  });

  it("deletes what a schedule's retention does not keep, only among that schedule's backups", () => {
    const backups = [1, 2, 3, 4].map((h) => candidate(`s-${h}`, { schedule: 's', takenAt: at(h) }));
    const other = candidate('other', { schedule: 'o', takenAt: at(9) });
    const decision = selectGarbage({
      backups: [...backups, other],
      retention: new Map([['s', { policy: { keepLast: 2 }, timeZone: 'UTC' }]]),
      now: NOW,
    });
    expect(decision.delete.map((d) => d.name)).toEqual(['s-3', 's-4']);
    expect(decision.delete[0]?.reasons).toEqual(['not kept by the retention of schedule s (keepLast 2)']);
  });

  it('gives both reasons when a backup is expired and not kept', () => {
    const decision = selectGarbage({
      backups: [
        candidate('s-1', { schedule: 's', takenAt: at(1) }),
        candidate('s-2', { schedule: 's', takenAt: at(2), expiration: at(1) }),
      ],
      retention: new Map([['s', { policy: { keepLast: 1 }, timeZone: 'UTC' }]]),
      now: NOW,
    });
    expect(decision.delete).toEqual([
      {
        name: 's-2',
        reasons: [
          `expired at ${at(1).toISOString()}`,
          'not kept by the retention of schedule s (keepLast 1)',
        ],
      },
    ]);
  });

  it('never deletes an unexpired newest Completed backup, and a second run deletes nothing new', () => {
    const arb = fc.uniqueArray(
      fc.record({
        hours: fc.integer({ min: 0, max: 2000 }),
        phase: fc.constantFrom('Completed', 'PartiallyFailed', 'Failed', 'InProgress'),
        ttl: fc.option(fc.integer({ min: -100, max: 3000 }), { nil: undefined }),
      }),
      { selector: (b) => b.hours, maxLength: 40 },
    );
    fc.assert(
      fc.property(arb, fc.integer({ min: 0, max: 5 }), (list, keepLast) => {
        const backups = list.map((b, i) =>
          candidate(`s-${i}`, {
            schedule: 's',
            phase: b.phase,
            takenAt: at(b.hours),
            ...(b.ttl !== undefined ? { expiration: at(b.hours - b.ttl) } : {}),
          }),
        );
        const retention = new Map([['s', { policy: { keepLast }, timeZone: 'UTC' }]]);
        const first = selectGarbage({ backups, retention, now: NOW });
        const deleted = new Set(first.delete.map((d) => d.name));
        const newest = [...backups]
          .filter((b) => b.phase === 'Completed')
          .sort((a, b) => b.takenAt.getTime() - a.takenAt.getTime())[0];
        if (newest && !(newest.expiration && newest.expiration <= NOW))
          expect(deleted.has(newest.name)).toBe(false);
        for (const b of backups.filter((b) => b.phase === 'InProgress'))
          expect(deleted.has(b.name)).toBe(false);
        const second = selectGarbage({
          backups: backups.filter((b) => !deleted.has(b.name)),
          retention,
          now: NOW,
        });
        expect(second.delete).toEqual([]);
      }),
    );
  });
});
