/**
 * Wall clocks in an IANA time zone, through the platform's Intl data: an instant's wall clock,
 * and the instant of a wall clock chosen as Go's `time.Date` chooses it (fields out of range are
 * normalized; in a DST gap or overlap the offset before the change is tried first). Pure.
 */

export interface WallClock {
  readonly year: number;
  /** 1-12. */
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  /** 0 = Sunday … 6 = Saturday. */
  readonly weekday: number;
}

const formats = new Map<string, Intl.DateTimeFormat>();

function formatOf(zone: string): Intl.DateTimeFormat {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formats.set(zone, format);
  }
  return format;
}

/** The wall clock of an instant (epoch milliseconds) in the zone. */
export function wallClock(instant: number, zone: string): WallClock {
  if (zone === 'UTC') return utcWallClock(instant);
  const parts: Record<string, number> = {};
  for (const part of formatOf(zone).formatToParts(new Date(instant))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  const year = parts.year ?? 1970;
  const month = parts.month ?? 1;
  const day = parts.day ?? 1;
  return {
    year,
    month,
    day,
    hour: parts.hour ?? 0,
    minute: parts.minute ?? 0,
    second: parts.second ?? 0,
    weekday: new Date(Date.UTC(year, month - 1, day)).getUTCDay(),
  };
}

function utcWallClock(instant: number): WallClock {
  const d = new Date(instant);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    weekday: d.getUTCDay(),
  };
}

/** The zone's offset from UTC at an instant, in milliseconds (wall minus UTC). */
export function offsetAt(instant: number, zone: string): number {
  if (zone === 'UTC') return 0;
  const w = wallClock(instant, zone);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return asUtc - Math.floor(instant / 1000) * 1000;
}

/** The instant of a wall clock in the zone (Go's time.Date: normalizes, then resolves the offset). */
export function zonedInstant(
  w: Pick<WallClock, 'year' | 'month' | 'day' | 'hour' | 'minute' | 'second'>,
  zone: string,
): number {
  const wall = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  if (zone === 'UTC') return wall;
  // As Go: the offset in effect at the wall time read as UTC, corrected once if it does not hold.
  const guess = offsetAt(wall, zone);
  const utc = wall - guess;
  const actual = offsetAt(utc, zone);
  return actual === guess ? utc : wall - actual;
}
