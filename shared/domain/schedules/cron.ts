/**
 * A Schedule's `spec.schedule` as Velero reads it: robfig/cron v3's standard parser (5 fields,
 * `@every <duration>`, the `@hourly`…`@annually` descriptors, a `CRON_TZ=`/`TZ=` prefix), and
 * the next fire time as robfig's `SpecSchedule.Next` computes it. cron-parser expands each field
 * into its values; the walk over them is robfig's, because no JavaScript library matches robfig
 * on three points Velero users see (test/unit/shared/domain/schedules/cron.test.ts):
 * - a day-of-month or day-of-week field that starts with `*` or `?` (also `*\/2`) makes the two
 *   fields AND-ed; only when both are restricted otherwise are they OR-ed;
 * - a time in a spring-forward gap does not fire that day (robfig adds whole hours in the zone);
 * - a time in a fall-back overlap fires twice, once per offset.
 * Never reads the clock; without a zone the schedule is in UTC (Velero's server runs in UTC).
 */
import { CronExpressionParser } from 'cron-parser';
import { ValidationFailed } from '../errors.js';
import { parseDuration } from '../kubernetes/duration.js';
import { type WallClock, wallClock, zonedInstant } from './zone.js';

export interface CronFields {
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  readonly daysOfMonth: readonly number[];
  readonly months: readonly number[];
  /** 0 = Sunday … 6 = Saturday. */
  readonly daysOfWeek: readonly number[];
  /** Whether the field began with `*` or `?` (robfig's star bit): day fields are then AND-ed. */
  readonly dayOfMonthStar: boolean;
  readonly dayOfWeekStar: boolean;
}

export type CronSpec =
  | { readonly kind: 'every'; readonly text: string; readonly everyMs: number }
  | { readonly kind: 'cron'; readonly text: string; readonly timeZone: string; readonly fields: CronFields };

/** Where `parseCron` problems are reported unless the caller names another field. */
const DEFAULT_PATH = 'spec.schedule';

const DESCRIPTORS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** robfig's bounds per field (day of week 0-6: `7` is refused, unlike Vixie cron). */
const BOUNDS = [
  { name: 'minute', min: 0, max: 59, names: false },
  { name: 'hour', min: 0, max: 23, names: false },
  { name: 'day of month', min: 1, max: 31, names: false },
  { name: 'month', min: 1, max: 12, names: true },
  { name: 'day of week', min: 0, max: 6, names: true },
] as const;

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

/** Parses a schedule, or throws ValidationFailed naming `path` (default `spec.schedule`). */
export function parseCron(text: string, path = DEFAULT_PATH): CronSpec {
  const fail = (message: string): never => {
    throw new ValidationFailed([{ path, message: `invalid schedule "${text.slice(0, 120)}": ${message}` }]);
  };
  let body = text.trim();
  let timeZone = 'UTC';
  const prefix = /^(?:CRON_TZ|TZ)=(\S*)(?:\s+|$)/.exec(body);
  if (prefix) {
    timeZone = prefix[1] ?? '';
    if (!isTimeZone(timeZone)) fail(`unknown time zone "${timeZone.slice(0, 60)}"`);
    body = body.slice(prefix[0].length).trim();
  }
  if (body === '') fail('empty spec string');
  if (body.startsWith('@every ') || body === '@every') {
    const everyMs = parseDuration(body.slice('@every'.length).trim());
    if (everyMs === undefined || everyMs < 0) fail('@every needs a Go duration such as 36h or 1h30m');
    // robfig: Every rounds down to whole seconds, and never below one second.
    return { kind: 'every', text, everyMs: Math.max(1000, Math.floor((everyMs ?? 0) / 1000) * 1000) };
  }
  const expanded = body.startsWith('@') ? DESCRIPTORS[body] : body;
  if (expanded === undefined) return fail(`unrecognized descriptor ${body.slice(0, 40)}`);
  return { kind: 'cron', text, timeZone, fields: parseFields(expanded, fail) };
}

function parseFields(body: string, fail: (message: string) => never): CronFields {
  const parts = body.split(/\s+/);
  if (parts.length !== 5) fail(`expected exactly 5 fields, found ${parts.length}`);
  for (const [i, field] of parts.entries()) checkField(field, BOUNDS[i] ?? BOUNDS[0], fail);
  let fields: ReturnType<typeof CronExpressionParser.parse>['fields'];
  try {
    fields = CronExpressionParser.parse(parts.join(' '), { strict: false }).fields;
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
  const starred = (field: string | undefined): boolean =>
    (field ?? '').split(',').some((part) => part.startsWith('*') || part.startsWith('?'));
  return {
    minutes: [...fields.minute.values],
    hours: [...fields.hour.values],
    daysOfMonth: fields.dayOfMonth.values.map(Number).filter((d) => Number.isInteger(d)),
    months: [...fields.month.values],
    daysOfWeek: [...new Set(fields.dayOfWeek.values.map((d) => Number(d) % 7))].sort((a, b) => a - b),
    dayOfMonthStar: starred(parts[2]),
    dayOfWeekStar: starred(parts[4]),
  };
}

/**
 * robfig's grammar, checked before cron-parser (which accepts more: `L`, `W`, `#`, `7` for
 * Sunday, names in any field): each comma part is `*`, `?`, a value or a range, with a step.
 */
function checkField(field: string, bounds: (typeof BOUNDS)[number], fail: (message: string) => never): void {
  for (const part of field.split(',')) {
    const match = /^(\*|\?|[A-Za-z0-9]+(?:-[A-Za-z0-9]+)?)(?:\/(\d+))?$/.exec(part);
    if (!match) fail(`${bounds.name}: "${part.slice(0, 40)}" is not a value, range or step`);
    const [low, high] = (match?.[1] ?? '').split('-');
    for (const value of [low, high]) {
      if (value === undefined || value === '*' || value === '?') continue;
      const n = fieldValue(value, bounds);
      if (n === undefined) fail(`${bounds.name}: "${value.slice(0, 20)}" is not a valid value`);
      else if (n < bounds.min || n > bounds.max)
        fail(`${bounds.name}: ${n} is outside ${bounds.min}-${bounds.max}`);
    }
    if (low !== undefined && high !== undefined) {
      const [a, b] = [fieldValue(low, bounds) ?? 0, fieldValue(high, bounds) ?? 0];
      if (a > b) fail(`${bounds.name}: beginning of range (${a}) beyond end of range (${b})`);
    }
    if (match?.[2] !== undefined && Number(match[2]) === 0)
      fail(`${bounds.name}: step of range should be a positive number`);
  }
}

function fieldValue(value: string, bounds: (typeof BOUNDS)[number]): number | undefined {
  if (/^\d+$/.test(value)) return Number(value);
  if (!bounds.names) return undefined;
  const list = bounds.name === 'month' ? MONTHS : WEEKDAYS;
  const index = list.indexOf(value.toLowerCase());
  if (index < 0) return undefined;
  return bounds.name === 'month' ? index + 1 : index;
}

function isTimeZone(zone: string): boolean {
  if (zone === '') return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The first time strictly after `after` at which the schedule fires (robfig's `Next`). */
export function nextFire(spec: CronSpec, after: Date): Date {
  const start = after.getTime();
  // robfig: Next(t) = t + d - t's sub-second part.
  if (spec.kind === 'every') return new Date(start - (((start % 1000) + 1000) % 1000) + spec.everyMs);
  const next = walk(spec.fields, spec.timeZone, Math.floor(start / 1000) * 1000 + 1000);
  if (next === undefined)
    throw new ValidationFailed([{ path: DEFAULT_PATH, message: `${spec.text} never fires` }]);
  return new Date(next);
}

/** robfig's SpecSchedule.Next over wall-clock fields in the zone, in epoch milliseconds. */
function walk(fields: CronFields, zone: string, from: number): number | undefined {
  let t = from;
  let added = false;
  const at = (w: WallClock, options: { day: number; hour: number; minute: number }): number =>
    zonedInstant({ ...w, day: options.day, hour: options.hour, minute: options.minute, second: 0 }, zone);
  const yearLimit = wallClock(t, zone).year + 5;
  for (let guard = 0; guard < 100_000; guard++) {
    const w = wallClock(t, zone);
    if (w.year > yearLimit) return undefined;
    if (!fields.months.includes(w.month)) {
      if (!added) {
        added = true;
        t = at(w, { day: 1, hour: 0, minute: 0 });
      }
      t = addMonth(t, zone);
      continue;
    }
    if (!dayMatches(fields, w)) {
      if (!added) {
        added = true;
        t = at(w, { day: w.day, hour: 0, minute: 0 });
      }
      t = addDay(t, zone);
      continue;
    }
    if (!fields.hours.includes(w.hour)) {
      if (!added) {
        added = true;
        t = at(w, { day: w.day, hour: w.hour, minute: 0 });
      }
      t += 3_600_000;
      continue;
    }
    if (!fields.minutes.includes(w.minute)) {
      if (!added) {
        added = true;
        t -= (w.second * 1000) % 60_000;
      }
      t += 60_000;
      continue;
    }
    if (w.second !== 0) {
      added = true;
      t += 1000;
      continue;
    }
    return t;
  }
  return undefined;
}

/** robfig: both day fields restricted → either matches; one starred → both must. */
function dayMatches(fields: CronFields, w: WallClock): boolean {
  const dom = fields.daysOfMonth.includes(w.day);
  const dow = fields.daysOfWeek.includes(w.weekday);
  return fields.dayOfMonthStar || fields.dayOfWeekStar ? dom && dow : dom || dow;
}

/** Go's AddDate(0, 1, 0) in the zone: same wall clock a month on (normalized, as time.Date). */
function addMonth(t: number, zone: string): number {
  const w = wallClock(t, zone);
  return zonedInstant({ ...w, month: w.month + 1 }, zone);
}

/**
 * Go's AddDate(0, 0, 1), then robfig's correction: a day start that DST moved off midnight is
 * moved back to it (23 h → next midnight, 1 h → midnight).
 */
function addDay(t: number, zone: string): number {
  const w = wallClock(t, zone);
  const next = zonedInstant({ ...w, day: w.day + 1 }, zone);
  const hour = wallClock(next, zone).hour;
  if (hour === 0) return next;
  return hour > 12 ? next + (24 - hour) * 3_600_000 : next - hour * 3_600_000;
}
