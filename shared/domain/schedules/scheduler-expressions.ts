/**
 * A parsed cron as EventBridge Scheduler expressions (`cron(min hour dom month dow year)`,
 * `rate(n unit)`) with their time zone, whose union fires when `nextFire` does:
 * - both day fields restricted (robfig's OR rule): two schedules, one by day of month and one
 *   by day of week; a day matching both fires both at the same time, and firing is idempotent
 *   for a scheduled time (functions/fire-schedule), so it makes one backup;
 * - one day field starred but not every day (`*\/2` with a weekday: robfig's AND) cannot be
 *   said in AWS cron: refused, naming `spec.schedule`;
 * - `@every` in whole minutes becomes a rate (first firing one period after the schedule is
 *   created, as robfig's `now + d`); any other `@every` is refused (Scheduler's unit is a minute).
 * AWS day-of-week counts 1 (Sunday) to 7. DST gaps and overlaps are Scheduler's to resolve.
 * Pure.
 */
import { ValidationFailed } from '../errors.js';
import type { CronFields, CronSpec } from './cron.js';

export interface SchedulerExpression {
  readonly expression: string;
  readonly timezone: string;
}

const FULL = {
  minutes: 60,
  hours: 24,
  daysOfMonth: 31,
  months: 12,
  daysOfWeek: 7,
} as const;

export function schedulerExpressions(spec: CronSpec, path = 'spec.schedule'): readonly SchedulerExpression[] {
  const refuse = (message: string): never => {
    throw new ValidationFailed([{ path, message: `"${spec.text.slice(0, 120)}" ${message}` }]);
  };
  if (spec.kind === 'every') return [{ expression: rateOf(spec.everyMs, refuse), timezone: 'UTC' }];
  const f = spec.fields;
  const minute = list(f.minutes, FULL.minutes);
  const hour = list(f.hours, FULL.hours);
  const month = list(f.months, FULL.months);
  const allDays = f.daysOfMonth.length === FULL.daysOfMonth;
  const allWeekdays = f.daysOfWeek.length === FULL.daysOfWeek;
  const cron = (dom: string, dow: string) => ({
    expression: `cron(${minute} ${hour} ${dom} ${month} ${dow} *)`,
    timezone: spec.timeZone,
  });
  const dom = list(f.daysOfMonth, FULL.daysOfMonth);
  const dow = list(
    f.daysOfWeek.map((d) => d + 1),
    FULL.daysOfWeek,
  );
  if (f.dayOfMonthStar || f.dayOfWeekStar) {
    // robfig's AND: expressible only when one side matches every day.
    if (allWeekdays) return [cron(dom, '?')];
    if (allDays) return [cron('?', dow)];
    return refuse(
      'restricts both the day of month and the day of week with a step on one of them (robfig ANDs them), which EventBridge Scheduler cannot express: list the days instead',
    );
  }
  return [cron(dom, '?'), cron('?', dow)];
}

function rateOf(everyMs: number, refuse: (message: string) => never): string {
  const minutes = everyMs / 60_000;
  if (!Number.isInteger(minutes) || minutes < 1)
    return refuse('is not a whole number of minutes, the smallest unit EventBridge Scheduler fires at');
  const unit = (n: number, name: string) => `rate(${n} ${name}${n === 1 ? '' : 's'})`;
  if (minutes % 1440 === 0) return unit(minutes / 1440, 'day');
  if (minutes % 60 === 0) return unit(minutes / 60, 'hour');
  return unit(minutes, 'minute');
}

/** `*` for a full field, else ascending values with runs of three or more as ranges. */
function list(values: readonly number[], full: number): string {
  const sorted = [...new Set(values)].sort((a, b) => a - b);
  if (sorted.length === full) return '*';
  const parts: string[] = [];
  let i = 0;
  while (i < sorted.length) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === (sorted[j] ?? 0) + 1) j++;
    const [a, b] = [sorted[i], sorted[j]];
    parts.push(j - i >= 2 ? `${a}-${b}` : sorted.slice(i, j + 1).join(','));
    i = j + 1;
  }
  return parts.join(',');
}

export type { CronFields };
