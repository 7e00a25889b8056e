/**
 * Lifeboat's retention policy of a Schedule, beyond Velero's TTL: keep the last N backups, and
 * grandfather-father-son buckets (the newest backup of each of the last D days, W weeks,
 * M months, Y years that have one, in the Schedule's time zone). Only restorable backups
 * (Completed, PartiallyFailed) count and are kept by a rule; the newest Completed one is always
 * kept, whatever the policy. Pure: decides which backups a policy keeps, never deletes.
 */
import { wallClock } from './zone.js';

export interface RetentionPolicy {
  readonly keepLast?: number;
  readonly daily?: number;
  readonly weekly?: number;
  readonly monthly?: number;
  readonly yearly?: number;
}

export interface RetainedBackup {
  readonly name: string;
  readonly phase: string;
  /** When it was taken (its creation or start time). */
  readonly takenAt: Date;
}

const RESTORABLE: ReadonlySet<string> = new Set(['Completed', 'PartiallyFailed']);

export function isRestorable(phase: string): boolean {
  return RESTORABLE.has(phase);
}

/** Newest first; equal times by name, so that every run orders them the same way. */
export function newestFirst<T extends RetainedBackup>(backups: readonly T[]): T[] {
  return [...backups].sort(
    (a, b) => b.takenAt.getTime() - a.takenAt.getTime() || (a.name < b.name ? 1 : a.name > b.name ? -1 : 0),
  );
}

/** The names a policy keeps among one Schedule's restorable backups, with the rules keeping each. */
export function retainedBy(options: {
  readonly policy: RetentionPolicy;
  readonly backups: readonly RetainedBackup[];
  /** The Schedule's time zone: days, weeks, months and years are its calendar's. */
  readonly timeZone: string;
}): ReadonlyMap<string, readonly string[]> {
  const { policy, timeZone } = options;
  const ordered = newestFirst(options.backups.filter((b) => isRestorable(b.phase)));
  const kept = new Map<string, string[]>();
  const keep = (name: string, rule: string) => kept.set(name, [...(kept.get(name) ?? []), rule]);
  const newestCompleted = ordered.find((b) => b.phase === 'Completed');
  if (newestCompleted) keep(newestCompleted.name, 'newest Completed');
  for (const b of ordered.slice(0, policy.keepLast ?? 0)) keep(b.name, 'keepLast');
  const buckets: readonly [keyof RetentionPolicy, (b: RetainedBackup) => string][] = [
    ['daily', (b) => dayKey(b.takenAt, timeZone)],
    ['weekly', (b) => weekKey(b.takenAt, timeZone)],
    ['monthly', (b) => dayKey(b.takenAt, timeZone).slice(0, 7)],
    ['yearly', (b) => dayKey(b.takenAt, timeZone).slice(0, 4)],
  ];
  for (const [rule, bucketOf] of buckets) {
    const limit = policy[rule] ?? 0;
    const seen = new Set<string>();
    for (const b of ordered) {
      if (seen.size >= limit) break;
      const bucket = bucketOf(b);
      if (seen.has(bucket)) continue;
      seen.add(bucket);
      keep(b.name, rule);
    }
  }
  return kept;
}

/** `yyyy-mm-dd` of the instant in the zone. */
function dayKey(at: Date, zone: string): string {
  const w = wallClock(at.getTime(), zone);
  return `${w.year}-${String(w.month).padStart(2, '0')}-${String(w.day).padStart(2, '0')}`;
}

/** The ISO 8601 week (`yyyy-Www`) of the instant's day in the zone. */
function weekKey(at: Date, zone: string): string {
  const w = wallClock(at.getTime(), zone);
  const day = new Date(Date.UTC(w.year, w.month - 1, w.day));
  const weekday = (day.getUTCDay() + 6) % 7; // Monday 0
  day.setUTCDate(day.getUTCDate() - weekday + 3); // the week's Thursday names its year
  const year = day.getUTCFullYear();
  // Week 1 is the one whose Thursday falls in January's first seven days.
  const week = 1 + Math.floor((day.getTime() - Date.UTC(year, 0, 1)) / (7 * 86_400_000));
  return `${year}-W${String(week).padStart(2, '0')}`;
}
