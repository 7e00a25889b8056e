import { describe, expect, it } from 'vitest';
import { backupCreateFlags } from '../../../cli/backup/flags.js';
import { backupNowFromSchedule, fromScheduleOf } from '../../../cli/backup/from-schedule.js';
import { parseFlags, UsageError } from '../../../cli/flags.js';

const values = (...args: string[]) =>
  parseFlags({ command: 'backup create', flags: backupCreateFlags, args }).values;

describe('backup create --from-schedule', () => {
  it('names the schedule, with the flags that say where and how it runs', () => {
    expect(
      fromScheduleOf({
        name: undefined,
        values: values('--from-schedule=nightly', '--local', '--dir=d', '--wait', '-o', 'json'),
      }),
    ).toBe('nightly');
    expect(fromScheduleOf({ name: 'b1', values: values('--ttl=1h') })).toBeUndefined();
  });

  it('refuses NAME, a template flag, an empty schedule, and neither NAME nor a schedule', () => {
    const refused =
      (name: string | undefined, ...args: string[]) =>
      () =>
        fromScheduleOf({ name, values: values(...args) });
    expect(refused('b1', '--from-schedule=nightly')).toThrow(/NAME and --from-schedule exclude each other/);
    expect(refused(undefined, '--from-schedule=nightly', '--include-namespaces=a', '--cluster=c')).toThrow(
      '--include-namespaces, --cluster cannot go with --from-schedule',
    );
    expect(refused(undefined, '--from-schedule=')).toThrow(UsageError);
    expect(refused(undefined)).toThrow('backup create needs NAME, or --from-schedule SCHEDULE');
  });

  it("makes the schedule's request at the second, as a firing would", () => {
    const request = backupNowFromSchedule(
      {
        cluster: 'prod',
        schedule: {
          metadata: { name: 'nightly', labels: { team: 'shop' } },
          spec: { schedule: '0 3 * * *', template: { includedNamespaces: ['shop'] } },
        },
      },
      new Date('2026-11-28T02:03:04.567Z'),
    );
    expect(request).toMatchObject({
      cluster: 'prod',
      backup: {
        metadata: {
          name: 'nightly-20261128020304',
          labels: { team: 'shop', 'velero.io/schedule-name': 'nightly' },
        },
        spec: { includedNamespaces: ['shop'] },
      },
    });
  });
});
