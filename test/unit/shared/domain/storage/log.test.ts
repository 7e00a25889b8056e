import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  countLevels,
  formatLogLine,
  type LogEvent,
  logTextOf,
} from '../../../../../shared/domain/storage/log.js';

/** The log line as first written: every field sorted and quoted one by one, the bytes to keep. */
function referenceLine(event: LogEvent): string {
  const quote = (value: string | number | boolean): string => {
    const text = String(value);
    return /^[A-Za-z0-9_./:@-]+$/.test(text) ? text : JSON.stringify(text);
  };
  const fields = Object.entries(event.fields ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => ` ${k}=${quote(v)}`)
    .join('');
  return `time="${event.time}" level=${event.level} msg=${JSON.stringify(event.msg)}${fields}`;
}

const key = fc.oneof(
  fc.constantFrom('backup', 'name', 'namespace', 'resource', 'pod', 'Name', 'a b', 'é', '10', '2'),
  fc.string({ unit: 'binary', maxLength: 8 }),
);
const value = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'az09_./:@-'), maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
);
const event: fc.Arbitrary<LogEvent> = fc
  .record({
    time: fc.constantFrom('2026-01-02T03:04:05.678Z', 't'),
    level: fc.constantFrom('debug', 'info', 'warning', 'error'),
    msg: fc.oneof(fc.constant('Backed up item'), fc.string({ unit: 'binary', maxLength: 30 })),
    keys: fc.uniqueArray(key, { maxLength: 6 }),
    values: fc.array(value, { minLength: 6, maxLength: 6 }),
    order: fc.constantFrom('as generated', 'sorted', 'none'),
  })
  .map(({ time, level, msg, keys, values, order }) => {
    if (order === 'none') return { time, level, msg };
    // Sorted: the order the hot events are built in, which skips the sort.
    const ordered = order === 'sorted' ? [...keys].sort() : keys;
    const fields: Record<string, string | number | boolean> = {};
    ordered.forEach((k, i) => {
      fields[k] = values[i] as string | number | boolean;
    });
    return { time, level, msg, fields };
  });

describe('the backup log', () => {
  it('writes every event in the bytes of the field-by-field formatting, whatever its fields and their order', () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 5 }), (events) => {
        for (const e of events) expect(formatLogLine(e)).toBe(referenceLine(e));
        expect(logTextOf(events).text).toBe(events.map((e) => `${referenceLine(e)}\n`).join(''));
      }),
      { numRuns: 500 },
    );
  });

  it('sorts fields built out of order, quoting values that are not bare words', () => {
    expect(
      formatLogLine({
        time: 't',
        level: 'warning',
        msg: 'Skipped item: "x"',
        fields: { resource: 'pods', namespace: 'a b', name: 'web-0', backup: 'nightly', attempt: 2 },
      }),
    ).toBe(
      'time="t" level=warning msg="Skipped item: \\"x\\"" attempt=2 backup=nightly name=web-0 namespace="a b" resource=pods',
    );
  });

  it('counts error and warning lines', () => {
    const events: LogEvent[] = ['error', 'info', 'warning', 'error', 'debug'].map((level) => ({
      time: 't',
      level: level as LogEvent['level'],
      msg: 'm',
    }));
    expect(countLevels(events)).toEqual({ errors: 2, warnings: 1 });
    expect(logTextOf(events).levels).toEqual({ errors: 2, warnings: 1 });
    expect(logTextOf([]).text).toBe('');
  });
});
