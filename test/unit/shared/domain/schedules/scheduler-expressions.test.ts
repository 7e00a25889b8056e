import { describe, expect, it } from 'vitest';
import { ValidationFailed } from '../../../../../shared/domain/errors.js';
import { nextFire, parseCron } from '../../../../../shared/domain/schedules/cron.js';
import { schedulerExpressions } from '../../../../../shared/domain/schedules/scheduler-expressions.js';

describe('schedulerExpressions turns a cron into EventBridge Scheduler expressions', () => {
  it.each([
    ['0 3 * * *', [['cron(0 3 * * ? *)', 'UTC']]],
    ['*/15 * * * *', [['cron(0,15,30,45 * * * ? *)', 'UTC']]],
    ['0 1-5 * * *', [['cron(0 1-5 * * ? *)', 'UTC']]],
    ['0 0 1 1 *', [['cron(0 0 1 1 ? *)', 'UTC']]],
    ['0 0 * * 0', [['cron(0 0 ? * 1 *)', 'UTC']]],
    ['30 2 * * mon-fri', [['cron(30 2 ? * 2-6 *)', 'UTC']]],
    ['CRON_TZ=America/New_York 0 2 * * *', [['cron(0 2 * * ? *)', 'America/New_York']]],
    ['@weekly', [['cron(0 0 ? * 1 *)', 'UTC']]],
    [
      '0 0 13 * 5',
      [
        ['cron(0 0 13 * ? *)', 'UTC'],
        ['cron(0 0 ? * 6 *)', 'UTC'],
      ],
    ],
    ['0 0 */2 * *', [['cron(0 0 1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31 * ? *)', 'UTC']]],
    ['@every 36h', [['rate(36 hours)', 'UTC']]],
    ['@every 1m', [['rate(1 minute)', 'UTC']]],
    ['@every 90m', [['rate(90 minutes)', 'UTC']]],
    ['@every 48h', [['rate(2 days)', 'UTC']]],
  ])('%s → %j', (text, expected) => {
    const got = schedulerExpressions(parseCron(text)).map((e) => [e.expression, e.timezone]);
    expect(got).toEqual(expected);
  });

  it.each([
    ['@every 90s', 'not a whole number of minutes'],
    ['@every 30s', 'not a whole number of minutes'],
    ['0 0 */2 * 5', 'cannot express'],
  ])('refuses %s, naming spec.schedule', (text, message) => {
    let error: unknown;
    try {
      schedulerExpressions(parseCron(text), 'schedule.spec.schedule');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ValidationFailed);
    expect((error as ValidationFailed).problems[0]?.path).toBe('schedule.spec.schedule');
    expect((error as ValidationFailed).problems[0]?.message).toContain(message);
  });

  it('the union of the two OR schedules fires exactly when nextFire does, for a year', () => {
    const spec = parseCron('0 6 13 * 5');
    const [byDay, byWeekday] = schedulerExpressions(spec);
    expect(byDay?.expression).toBe('cron(0 6 13 * ? *)');
    expect(byWeekday?.expression).toBe('cron(0 6 ? * 6 *)');
    // AWS fires on day 13 (any weekday) and on Fridays (AWS 6): the same days as robfig's OR.
    let at = new Date('2026-01-01T00:00:00Z');
    for (let i = 0; i < 60; i++) {
      at = nextFire(spec, at);
      expect(at.getUTCDate() === 13 || at.getUTCDay() === 5).toBe(true);
      expect(at.getUTCHours()).toBe(6);
    }
  });
});
