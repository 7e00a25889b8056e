import { describe, expect, it } from 'vitest';
import { ValidationFailed } from '../../../../../shared/domain/errors.js';
import { nextFire, parseCron } from '../../../../../shared/domain/schedules/cron.js';

/** The next `count` fire times after `after`, each computed from the previous (as Velero does). */
function fires(text: string, after: string, count: number): string[] {
  const spec = parseCron(text);
  const out: string[] = [];
  let at = new Date(after);
  for (let i = 0; i < count; i++) {
    at = nextFire(spec, at);
    out.push(at.toISOString().replace('.000Z', 'Z'));
  }
  return out;
}

describe('nextFire follows robfig/cron v3 as Velero uses it', () => {
  it.each([
    // Velero's documented examples (velero schedule create --help, docs/schedule.md).
    ['0 */6 * * *', '2026-01-01T07:30:00Z', ['2026-01-01T12:00:00Z', '2026-01-01T18:00:00Z']],
    ['0 7 * * *', '2026-01-01T07:00:00Z', ['2026-01-02T07:00:00Z', '2026-01-03T07:00:00Z']],
    ['@every 6h', '2026-01-01T07:30:00Z', ['2026-01-01T13:30:00Z', '2026-01-01T19:30:00Z']],
    ['@daily', '2026-01-01T07:30:00Z', ['2026-01-02T00:00:00Z', '2026-01-03T00:00:00Z']],
    ['@hourly', '2026-01-01T07:30:00Z', ['2026-01-01T08:00:00Z', '2026-01-01T09:00:00Z']],
    ['@weekly', '2026-01-01T00:00:00Z', ['2026-01-04T00:00:00Z', '2026-01-11T00:00:00Z']],
    ['@monthly', '2026-01-15T00:00:00Z', ['2026-02-01T00:00:00Z', '2026-03-01T00:00:00Z']],
    ['@yearly', '2026-01-15T00:00:00Z', ['2027-01-01T00:00:00Z', '2028-01-01T00:00:00Z']],
    ['@annually', '2026-01-15T00:00:00Z', ['2027-01-01T00:00:00Z']],
    ['@midnight', '2026-01-01T23:59:59Z', ['2026-01-02T00:00:00Z']],
    ['* * * * *', '2026-01-01T00:00:30.250Z', ['2026-01-01T00:01:00Z', '2026-01-01T00:02:00Z']],
    ['*/15 1-2 * JAN-FEB mon-fri', '2026-01-01T02:50:00Z', ['2026-01-02T01:00:00Z', '2026-01-02T01:15:00Z']],
    ['5/20 * * * *', '2026-01-01T00:00:00Z', ['2026-01-01T00:05:00Z', '2026-01-01T00:25:00Z']],
    ['0 0 ? * sun', '2026-01-01T00:00:00Z', ['2026-01-04T00:00:00Z']],
  ])('%s after %s fires at %j', (text, after, expected) => {
    expect(fires(text, after, expected.length)).toEqual(expected);
  });

  it('@every 36h fires 36 hours after the previous firing, sub-seconds dropped', () => {
    expect(fires('@every 36h', '2026-01-01T00:00:00.750Z', 3)).toEqual([
      '2026-01-02T12:00:00Z',
      '2026-01-04T00:00:00Z',
      '2026-01-05T12:00:00Z',
    ]);
  });

  it('@every rounds down to whole seconds, and never below one second', () => {
    expect(fires('@every 1.5s', '2026-01-01T00:00:00Z', 1)).toEqual(['2026-01-01T00:00:01Z']);
    expect(fires('@every 100ms', '2026-01-01T00:00:00Z', 1)).toEqual(['2026-01-01T00:00:01Z']);
  });

  it('February 29th fires only in leap years', () => {
    expect(fires('0 0 29 2 *', '2026-01-01T00:00:00Z', 2)).toEqual([
      '2028-02-29T00:00:00Z',
      '2032-02-29T00:00:00Z',
    ]);
  });

  it('day of month and day of week both restricted fire on either (the OR rule)', () => {
    // The 13th, or any Friday: Jan 2 and 9 are Fridays, Jan 13 a Tuesday.
    expect(fires('0 0 13 * 5', '2026-01-01T00:00:00Z', 4)).toEqual([
      '2026-01-02T00:00:00Z',
      '2026-01-09T00:00:00Z',
      '2026-01-13T00:00:00Z',
      '2026-01-16T00:00:00Z',
    ]);
  });

  it('a day field starting with * (even */2) makes both day fields hold (robfig AND)', () => {
    // Odd days that are Fridays: Jan 9, Jan 23, Feb 13, Feb 27 (croner and cron-parser OR these).
    expect(fires('0 0 */2 * 5', '2026-01-01T00:00:00Z', 4)).toEqual([
      '2026-01-09T00:00:00Z',
      '2026-01-23T00:00:00Z',
      '2026-02-13T00:00:00Z',
      '2026-02-27T00:00:00Z',
    ]);
  });

  it('CRON_TZ=America/New_York 0 2 * * * skips the spring-forward day, as robfig does', () => {
    // 2026-03-08 02:00 does not exist in New York; robfig's nightly 2am job skips that day.
    expect(fires('CRON_TZ=America/New_York 0 2 * * *', '2026-03-07T00:00:00Z', 3)).toEqual([
      '2026-03-07T07:00:00Z',
      '2026-03-09T06:00:00Z',
      '2026-03-10T06:00:00Z',
    ]);
  });

  it('CRON_TZ=America/New_York 0 2 * * * fires once on the fall-back day, at 2am EST', () => {
    expect(fires('CRON_TZ=America/New_York 0 2 * * *', '2026-10-31T00:00:00Z', 3)).toEqual([
      '2026-10-31T06:00:00Z',
      '2026-11-01T07:00:00Z',
      '2026-11-02T07:00:00Z',
    ]);
  });

  it('a time inside the fall-back overlap fires twice, once per offset (robfig: 1am runs twice)', () => {
    expect(fires('TZ=America/New_York 0 1 * * *', '2026-11-01T00:00:00Z', 3)).toEqual([
      '2026-11-01T05:00:00Z',
      '2026-11-01T06:00:00Z',
      '2026-11-02T06:00:00Z',
    ]);
  });

  it('an hourly job in New York skips the missing hour and repeats the doubled one', () => {
    expect(fires('TZ=America/New_York 0 * * * *', '2026-03-08T05:30:00Z', 2)).toEqual([
      '2026-03-08T06:00:00Z', // 01:00 EST
      '2026-03-08T07:00:00Z', // 03:00 EDT
    ]);
    expect(fires('TZ=America/New_York 0 * * * *', '2026-11-01T04:30:00Z', 3)).toEqual([
      '2026-11-01T05:00:00Z', // 01:00 EDT
      '2026-11-01T06:00:00Z', // 01:00 EST
      '2026-11-01T07:00:00Z', // 02:00 EST
    ]);
  });

  it('a time zone prefix applies to descriptors too', () => {
    expect(fires('CRON_TZ=Asia/Tokyo @daily', '2026-01-01T00:00:00Z', 1)).toEqual(['2026-01-01T15:00:00Z']);
  });
});

describe('parseCron refuses what robfig refuses, naming the field', () => {
  it.each([
    ['0 0 * * 7', 'day of week: 7 is outside 0-6'],
    ['* * * *', 'expected exactly 5 fields, found 4'],
    ['0 * * * * *', 'expected exactly 5 fields, found 6'],
    ['0 0 L * *', 'day of month: "L" is not a valid value'],
    ['0 0 * * 5#2', 'day of week: "5#2" is not a value, range or step'],
    ['61 * * * *', 'minute: 61 is outside 0-59'],
    ['0 0 0 * *', 'day of month: 0 is outside 1-31'],
    ['0 0 * 13 *', 'month: 13 is outside 1-12'],
    ['5-1 * * * *', 'minute: beginning of range (5) beyond end of range (1)'],
    ['*/0 * * * *', 'minute: step of range should be a positive number'],
    ['0 0 * * funday', 'day of week: "funday" is not a valid value'],
    ['CRON_TZ=Mars/Olympus 0 * * * *', 'unknown time zone "Mars/Olympus"'],
    ['@every', '@every needs a Go duration'],
    ['@every 3 days', '@every needs a Go duration'],
    ['@fortnightly', 'unrecognized descriptor @fortnightly'],
    ['', 'empty spec string'],
  ])('%j: %s', (text, message) => {
    let error: unknown;
    try {
      parseCron(text, 'schedule.spec.schedule');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ValidationFailed);
    const problem = (error as ValidationFailed).problems[0];
    expect(problem?.path).toBe('schedule.spec.schedule');
    expect(problem?.message).toContain(message);
  });
});
