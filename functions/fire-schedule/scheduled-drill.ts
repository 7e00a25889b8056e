/**
 * A Schedule's drill target at a firing: a DR drill of the Schedule's latest Completed backup into
 * the drill's cluster, named `<schedule>-drill-<yyyyMMddHHmmss>` of the scheduled time and started
 * through the drill workflow under that name. It drills what a disaster at that moment would leave,
 * so the report's RPO is the Schedule's real one. Skipped, with the reason, while the Schedule's
 * previous drill still runs or before it has a Completed backup. Idempotent for one scheduled time:
 * the same firing again finds the drill it started. Never changes a backup.
 */
import type { DrillRequest } from '../../shared/contracts/drill.js';
import type { StoredSchedule } from '../../shared/contracts/schedule.js';
import { AlreadyExists } from '../../shared/domain/errors.js';
import { SCHEDULE_NAME_LABEL, scheduledBackupName } from '../../shared/domain/schedules/naming.js';
import { drillKeys } from '../../shared/domain/storage/keys.js';
import type { Executions } from '../../shared/ports/executions.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { latestBackupOfSchedule } from '../common/schedule-backups.js';

export type DrillFiring = { readonly drill: string } | { readonly drillSkipped: string };

interface DrillDeps {
  readonly store: ObjectStore;
  readonly executions: Executions;
  readonly signal?: AbortSignal;
}

/**
 * The drill request a Schedule with a drill target makes at a time, of the backup given (the
 * latest Completed one at the firing, resolved then, so that the firing's own backup, should it
 * complete first, is not the one drilled); undefined without a drill target.
 */
export function scheduledDrillRequest(
  stored: StoredSchedule,
  options: { readonly at: Date; readonly backupName: string },
): DrillRequest | undefined {
  const { drill } = stored;
  if (!drill) return undefined;
  const schedule = stored.schedule.metadata.name;
  return {
    cluster: drill.cluster,
    drill: {
      apiVersion: 'lifeboat.io/v1',
      kind: 'Drill',
      metadata: {
        name: scheduledDrillName(schedule, options.at),
        labels: { [SCHEDULE_NAME_LABEL]: schedule },
      },
      spec: {
        backupName: options.backupName,
        ...(drill.namespaceMapping ? { namespaceMapping: drill.namespaceMapping } : {}),
        ...(drill.readyTimeout ? { readyTimeout: drill.readyTimeout } : {}),
      },
    },
    firedBySchedule: schedule,
  };
}

const scheduledDrillName = (schedule: string, at: Date) => scheduledBackupName(`${schedule}-drill`, at);

/** Whether an execution's input is a drill this Schedule's firing made (its name is the firing's). */
function madeBySchedule(input: string, schedule: string): boolean {
  try {
    const request = (JSON.parse(input) as { request?: DrillRequest }).request;
    return request?.drill?.metadata?.labels?.[SCHEDULE_NAME_LABEL] === schedule;
  } catch {
    return false;
  }
}

/** Starts the firing's drill, or says why not; undefined when the Schedule has no drill target. */
export async function fireScheduledDrill(
  stored: StoredSchedule,
  at: Date,
  deps: DrillDeps,
): Promise<DrillFiring | undefined> {
  if (!stored.drill) return undefined;
  const scheduleName = stored.schedule.metadata.name;
  const name = scheduledDrillName(scheduleName, at);
  const signal = deps.signal ? { signal: deps.signal } : {};
  // The same firing again finds its drill, whichever backup was latest when it first ran.
  const existing = await deps.executions.describe({ workflow: 'drill', name, ...signal });
  if (existing) return sameOrTaken(madeBySchedule(existing.input, scheduleName), name);
  // Its execution, not its report, says a drill still runs: a report a killed run left
  // InProgress must not stop every later drill.
  const previous = stored.schedule.status?.lastDrillName;
  if (previous !== undefined && previous !== name) {
    const before = await deps.executions.describe({ workflow: 'drill', name: previous, ...signal });
    if (before?.status === 'RUNNING')
      return { drillSkipped: `the previous drill ${previous} is still running` };
  }
  const latest = await latestBackupOfSchedule(deps.store, scheduleName, signal);
  if (!latest) return { drillSkipped: `schedule "${scheduleName}" has no Completed backup to drill yet` };
  const request = scheduledDrillRequest(stored, { at, backupName: latest.metadata.name });
  const input = JSON.stringify({ request });
  if (await deps.store.exists(drillKeys({ name }).claim, signal)) return sameOrTaken(false, name);
  try {
    await deps.executions.start({ workflow: 'drill', name, input, ...signal });
  } catch (error) {
    if (!(error instanceof AlreadyExists)) throw error;
    const raced = await deps.executions.describe({ workflow: 'drill', name, ...signal });
    return sameOrTaken(madeBySchedule(raced?.input ?? '', scheduleName), name);
  }
  return { drill: name };
}

function sameOrTaken(same: boolean, name: string): DrillFiring {
  return same
    ? { drill: name }
    : { drillSkipped: `a drill named ${name} already exists, not made by this firing` };
}
