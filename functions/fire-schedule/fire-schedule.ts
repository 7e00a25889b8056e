/**
 * Fires a Schedule at a scheduled time: starts its backup through the backup workflow, named as
 * Velero names it (`<schedule>-<yyyyMMddHHmmss>` of the scheduled time, UTC), or skips it with
 * the reason recorded in the Schedule's status when its previous backup still runs (Velero:
 * a due run is skipped while a backup of the schedule is New or InProgress). Idempotent for one
 * scheduled time: the same firing again (a retried invocation, or both of an OR schedule's
 * timers at once) finds the backup it started. With a drill target, the firing also starts a
 * drill (scheduled-drill.ts). Never deletes or rewrites a backup.
 */
import type { StoredSchedule } from '../../shared/contracts/schedule.js';
import { scheduledBackupMeta } from '../../shared/domain/schedules/naming.js';
import { backupKeys } from '../../shared/domain/storage/keys.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { Executions } from '../../shared/ports/executions.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { backupStatus, RUNNING_PHASES } from '../api/backup-status.js';
import { startOnce } from '../api/starts.js';
import { readSchedule, writeSchedule } from '../schedules/schedules.js';
import { fireScheduledDrill } from './scheduled-drill.js';

export interface FireDeps {
  readonly store: ObjectStore;
  readonly executions: Executions;
  readonly clock: Clock;
  readonly signal?: AbortSignal;
}

export type FireOutcome = ({ readonly backup: string } | { readonly skipped: string }) &
  Partial<{ readonly drill: string; readonly drillSkipped: string }>;

/** The backup request a Schedule makes at a time (also `backup create --from-schedule`). */
export function scheduledBackupRequest(stored: StoredSchedule, at: Date) {
  const { schedule } = stored;
  const meta = scheduledBackupMeta({
    schedule: schedule.metadata,
    ...(schedule.spec.template.metadata?.labels
      ? { templateLabels: schedule.spec.template.metadata.labels }
      : {}),
    at,
  });
  return {
    cluster: stored.cluster,
    backup: {
      apiVersion: 'velero.io/v1' as const,
      kind: 'Backup' as const,
      metadata: meta,
      spec: schedule.spec.template,
    },
  };
}

export async function fireSchedule(
  input: { readonly schedule: string; readonly scheduledTime: Date },
  deps: FireDeps,
): Promise<FireOutcome> {
  const stored = await readSchedule(input.schedule, deps);
  if (!stored) return { skipped: `schedule "${input.schedule}" does not exist` };
  const status = stored.schedule.status ?? {};
  const name = scheduledBackupRequest(stored, input.scheduledTime).backup.metadata.name;
  if (stored.schedule.spec.paused === true && status.lastBackupName !== name)
    return { skipped: `schedule "${input.schedule}" is paused` };
  const backup = await fireBackup(stored, input, deps);
  // The drill target drills the latest Completed backup, whatever became of this firing's backup.
  const drill = await fireScheduledDrill(stored, input.scheduledTime, deps);
  return record(stored, { ...backup, ...drill }, input, deps);
}

/** The firing's backup: started, found started by the same firing, or skipped with the reason. */
async function fireBackup(
  stored: StoredSchedule,
  input: { readonly scheduledTime: Date },
  deps: FireDeps,
): Promise<FireOutcome> {
  const request = scheduledBackupRequest(stored, input.scheduledTime);
  const name = request.backup.metadata.name;
  const previous = stored.schedule.status?.lastBackupName;
  if (previous !== undefined && previous !== name) {
    const phase = (await backupStatus(previous, deps))?.status.phase;
    if (phase !== undefined && RUNNING_PHASES.has(phase))
      return { skipped: `the previous backup ${previous} is still running (${phase})` };
  }
  const keys = backupKeys(name);
  const outcome = await startOnce({
    workflow: 'backup',
    name,
    request,
    takenKeys: [keys.metadata, keys.claim],
    store: deps.store,
    executions: deps.executions,
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  if (outcome === 'taken')
    return { skipped: `a backup named ${name} already exists, not made by this firing` };
  return { backup: name };
}

/** Records the firing in the Schedule's status (lastBackup or lastSkipped, with the reason). */
async function record(
  stored: StoredSchedule,
  outcome: FireOutcome,
  input: { readonly scheduledTime: Date },
  deps: FireDeps,
): Promise<FireOutcome> {
  const at = input.scheduledTime.toISOString();
  const status = stored.schedule.status ?? {};
  // A late retry of an older firing answers as before and leaves the newer status alone.
  const latest = [status.lastBackup, status.lastSkipped].filter((t): t is string => t !== undefined);
  if (latest.some((t) => Date.parse(t) > input.scheduledTime.getTime())) return outcome;
  const fired =
    'backup' in outcome
      ? { ...status, phase: 'Enabled' as const, lastBackup: at, lastBackupName: outcome.backup }
      : { ...status, lastSkipped: at, lastSkippedReason: outcome.skipped };
  // A drill started makes the reason an earlier one was skipped old news.
  const { lastDrillSkippedReason: _, ...rest } = fired;
  const next = outcome.drill
    ? { ...rest, lastDrillName: outcome.drill }
    : { ...fired, ...(outcome.drillSkipped ? { lastDrillSkippedReason: outcome.drillSkipped } : {}) };
  if (JSON.stringify(next) !== JSON.stringify(status))
    await writeSchedule({ ...stored, schedule: { ...stored.schedule, status: next } }, deps);
  return outcome;
}
