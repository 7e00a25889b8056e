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

/** The drill request a Schedule with a drill target makes at a time; undefined without one. */
export function scheduledDrillRequest(stored: StoredSchedule, at: Date): DrillRequest | undefined {
  const { drill } = stored;
  if (!drill) return undefined;
  const schedule = stored.schedule.metadata.name;
  return {
    cluster: drill.cluster,
    drill: {
      apiVersion: 'lifeboat.io/v1',
      kind: 'Drill',
      metadata: {
        name: scheduledBackupName(`${schedule}-drill`, at),
        labels: { [SCHEDULE_NAME_LABEL]: schedule },
      },
      spec: {
        scheduleName: schedule,
        ...(drill.namespaceMapping ? { namespaceMapping: drill.namespaceMapping } : {}),
        ...(drill.readyTimeout ? { readyTimeout: drill.readyTimeout } : {}),
      },
    },
  };
}

/** Starts the firing's drill, or says why not; undefined when the Schedule has no drill target. */
export async function fireScheduledDrill(
  stored: StoredSchedule,
  at: Date,
  deps: DrillDeps,
): Promise<DrillFiring | undefined> {
  const request = scheduledDrillRequest(stored, at);
  if (!request) return undefined;
  const name = request.drill.metadata.name;
  const signal = deps.signal ? { signal: deps.signal } : {};
  const input = JSON.stringify({ request });
  const existing = await deps.executions.describe({ workflow: 'drill', name, ...signal });
  if (existing) return sameOrTaken(existing.input === input, name);
  // Its execution, not its report, says a drill still runs: a report a killed run left
  // InProgress must not stop every later drill.
  const previous = stored.schedule.status?.lastDrillName;
  if (previous !== undefined && previous !== name) {
    const before = await deps.executions.describe({ workflow: 'drill', name: previous, ...signal });
    if (before?.status === 'RUNNING')
      return { drillSkipped: `the previous drill ${previous} is still running` };
  }
  const scheduleName = stored.schedule.metadata.name;
  if (!(await latestBackupOfSchedule(deps.store, scheduleName, signal)))
    return { drillSkipped: `schedule "${scheduleName}" has no Completed backup to drill yet` };
  if (await deps.store.exists(drillKeys({ name }).claim, signal)) return sameOrTaken(false, name);
  try {
    await deps.executions.start({ workflow: 'drill', name, input, ...signal });
  } catch (error) {
    if (!(error instanceof AlreadyExists)) throw error;
    const raced = await deps.executions.describe({ workflow: 'drill', name, ...signal });
    return sameOrTaken(raced?.input === input, name);
  }
  return { drill: name };
}

function sameOrTaken(same: boolean, name: string): DrillFiring {
  return same
    ? { drill: name }
    : { drillSkipped: `a drill named ${name} already exists, not made by this firing` };
}
