import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  newestFirst,
  type RetainedBackup,
  type RetentionPolicy,
  retainedBy,
} from '../../../../../shared/domain/schedules/retention.js';

const DAY = 86_400_000;
const START = Date.UTC(2024, 0, 1);

const backupArb = fc.record({
  offsetMinutes: fc.integer({ min: 0, max: 3 * 365 * 24 * 60 }),
  phase: fc.constantFrom('Completed', 'Completed', 'PartiallyFailed', 'Failed'),
});

const backupsArb = fc
  .uniqueArray(backupArb, { selector: (b) => b.offsetMinutes, maxLength: 60 })
  .map((list) =>
    list.map(
      (b, i): RetainedBackup => ({
        name: `s-${i}`,
        phase: b.phase,
        takenAt: new Date(START + b.offsetMinutes * 60_000),
      }),
    ),
  );

const count = fc.option(fc.integer({ min: 0, max: 8 }), { nil: undefined });
const policyArb = fc.record({ keepLast: count, daily: count, weekly: count, monthly: count, yearly: count });
const zoneArb = fc.constantFrom('UTC', 'America/New_York', 'Asia/Kolkata');

const clean = (p: { [k: string]: number | undefined }): RetentionPolicy =>
  Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined)) as RetentionPolicy;

describe('retention keeps what each rule asks for, and no more', () => {
  it('never drops the newest Completed backup', () => {
    fc.assert(
      fc.property(backupsArb, policyArb, zoneArb, (backups, policy, timeZone) => {
        const kept = retainedBy({ policy: clean(policy), backups, timeZone });
        const newest = newestFirst(backups).find((b) => b.phase === 'Completed');
        if (newest) expect(kept.has(newest.name)).toBe(true);
      }),
    );
  });

  it('keeps the keepLast newest restorable backups', () => {
    fc.assert(
      fc.property(backupsArb, count, (backups, keepLast) => {
        const kept = retainedBy({ policy: clean({ keepLast }), backups, timeZone: 'UTC' });
        const restorable = newestFirst(backups).filter((b) => b.phase !== 'Failed');
        for (const b of restorable.slice(0, keepLast ?? 0)) expect(kept.has(b.name)).toBe(true);
      }),
    );
  });

  it('keeps the newest backup of each of the last D days that have one', () => {
    fc.assert(
      fc.property(backupsArb, fc.integer({ min: 0, max: 8 }), (backups, daily) => {
        const kept = retainedBy({ policy: { daily }, backups, timeZone: 'UTC' });
        const days = new Map<string, RetainedBackup>();
        for (const b of newestFirst(backups).filter((b) => b.phase !== 'Failed')) {
          const day = b.takenAt.toISOString().slice(0, 10);
          if (!days.has(day)) days.set(day, b);
        }
        const wanted = [...days.values()].slice(0, daily);
        for (const b of wanted) expect(kept.get(b.name)).toContain('daily');
        const dailyKept = [...kept.entries()].filter(([, rules]) => rules.includes('daily'));
        expect(dailyKept.length).toBe(wanted.length);
      }),
    );
  });

  it('keeps nothing that is not restorable, and nothing beyond the rules and the newest Completed', () => {
    fc.assert(
      fc.property(backupsArb, policyArb, zoneArb, (backups, policy, timeZone) => {
        const p = clean(policy);
        const kept = retainedBy({ policy: p, backups, timeZone });
        const bound =
          1 + (p.keepLast ?? 0) + (p.daily ?? 0) + (p.weekly ?? 0) + (p.monthly ?? 0) + (p.yearly ?? 0);
        expect(kept.size).toBeLessThanOrEqual(bound);
        for (const name of kept.keys())
          expect(backups.find((b) => b.name === name)?.phase).not.toBe('Failed');
      }),
    );
  });

  it('is stable: applied again to what it kept, it keeps all of it', () => {
    fc.assert(
      fc.property(backupsArb, policyArb, zoneArb, (backups, policy, timeZone) => {
        const p = clean(policy);
        const kept = retainedBy({ policy: p, backups, timeZone });
        const survivors = backups.filter((b) => kept.has(b.name));
        const again = retainedBy({ policy: p, backups: survivors, timeZone });
        expect([...again.keys()].sort()).toEqual([...kept.keys()].sort());
      }),
    );
  });

  it('counts days in the schedule time zone', () => {
    const backups: RetainedBackup[] = [
      { name: 'late', phase: 'Completed', takenAt: new Date('2026-01-02T03:00:00Z') }, // Jan 1 in New York
      { name: 'early', phase: 'Completed', takenAt: new Date('2026-01-01T18:00:00Z') },
    ];
    expect([...retainedBy({ policy: { daily: 2 }, backups, timeZone: 'UTC' }).keys()].sort()).toEqual([
      'early',
      'late',
    ]);
    expect([...retainedBy({ policy: { daily: 2 }, backups, timeZone: 'America/New_York' }).keys()]).toEqual([
      'late',
    ]);
  });

  it('weekly keeps one backup per ISO week; yearly one per year', () => {
    const at = (iso: string, name: string): RetainedBackup => ({
      name,
      phase: 'Completed',
      takenAt: new Date(iso),
    });
    // 2026-01-04 is a Sunday (ISO week 1 of 2026), 2026-01-05 a Monday (week 2).
    const backups = [
      at('2026-01-03T10:00:00Z', 'sat'),
      at('2026-01-04T10:00:00Z', 'sun'),
      at('2026-01-05T10:00:00Z', 'mon'),
    ];
    expect([...retainedBy({ policy: { weekly: 2 }, backups, timeZone: 'UTC' }).keys()].sort()).toEqual([
      'mon',
      'sun',
    ]);
    const years = [
      at('2024-06-01T00:00:00Z', 'a'),
      at('2025-06-01T00:00:00Z', 'b'),
      at('2025-07-01T00:00:00Z', 'c'),
    ];
    expect([...retainedBy({ policy: { yearly: 5 }, backups: years, timeZone: 'UTC' }).keys()].sort()).toEqual(
      ['a', 'c'],
    );
  });

  it('with a year of daily backups, 7 daily 4 weekly 12 monthly keeps at most 23', () => {
    const backups = Array.from({ length: 365 }, (_, i) => ({
      name: `d-${i}`,
      phase: 'Completed',
      takenAt: new Date(START + i * DAY),
    }));
    const kept = retainedBy({ policy: { daily: 7, weekly: 4, monthly: 12 }, backups, timeZone: 'UTC' });
    expect(kept.size).toBeLessThanOrEqual(23);
    expect(kept.size).toBeGreaterThanOrEqual(12);
  });
});
