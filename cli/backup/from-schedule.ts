/**
 * `backup create --from-schedule S`: a backup now from a Schedule's template, named and labelled
 * as the Schedule's firing at this second would be (`<schedule>-<yyyyMMddHHmmss>`, UTC). The
 * Schedule says what to back up, so NAME and the flags that would change the template are usage
 * errors with it, rather than silently ignored as Velero ignores them.
 */
import { scheduledBackupRequest } from '../../functions/fire-schedule/fire-schedule.js';
import type { StoredSchedule } from '../../shared/contracts/schedule.js';
import type { FlagValues } from '../flags.js';
import { UsageError } from '../flags.js';
import type { backupCreateFlags } from './flags.js';

type CreateFlags = FlagValues<typeof backupCreateFlags>;

/** The flags that keep their meaning with --from-schedule: where and how it runs, not what. */
const WITH_SCHEDULE = new Set([
  'from-schedule',
  'snapshot-region',
  'repository-key-file',
  'kubeconfig',
  'context',
  'wait',
  'local',
  'dir',
  'endpoint',
  'output',
  'help',
]);

/**
 * The schedule named by --from-schedule (undefined without it), after refusing what cannot go
 * with it; without it, NAME is required.
 */
export function fromScheduleOf(options: { readonly name: string | undefined; readonly values: CreateFlags }) {
  const schedule = options.values['from-schedule'];
  if (schedule === undefined) {
    if (!options.name) throw new UsageError('backup create needs NAME, or --from-schedule SCHEDULE');
    return undefined;
  }
  if (schedule === '') throw new UsageError('--from-schedule needs the name of a schedule');
  if (options.name)
    throw new UsageError(
      `NAME and --from-schedule exclude each other: the backup is named as the schedule names its backups (${schedule}-<yyyyMMddHHmmss>)`,
    );
  const given = Object.entries(options.values)
    .filter(([flag, value]) => value !== undefined && !WITH_SCHEDULE.has(flag))
    .map(([flag]) => `--${flag}`);
  if (given.length > 0)
    throw new UsageError(
      `${given.join(', ')} cannot go with --from-schedule: the schedule's template says what to back up`,
    );
  return schedule;
}

/** The backup request the Schedule makes now (to the second, as a firing's scheduled time is). */
export function backupNowFromSchedule(stored: StoredSchedule, now: Date) {
  return scheduledBackupRequest(stored, new Date(Math.floor(now.getTime() / 1000) * 1000));
}
