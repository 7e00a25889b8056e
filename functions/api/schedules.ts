/**
 * The schedule routes (docs/api.yaml): create, list, get, pause, unpause and delete a Schedule
 * through the schedule use cases (functions/schedules: the store, then the timer: EventBridge
 * Scheduler in AWS), a backup now from a Schedule's template (named as a scheduled one, through
 * fire-schedule's request), and what the next garbage collection would delete (a dry run). A
 * request the contract refuses is a 400 by field path; a deployment without a timer answers 503.
 * Routed by ROUTES (api.ts) as docs/api.yaml documents them.
 */
import { systemClock } from '../../shared/adapters/system-clock.js';
import { parseScheduleRequest, type StoredSchedule } from '../../shared/contracts/schedule.js';
import { AlreadyExists, ScheduleNotFound, ValidationFailed } from '../../shared/domain/errors.js';
import { backupKeys } from '../../shared/domain/storage/keys.js';
import type { Clock } from '../../shared/ports/clock.js';
import { collectGarbage } from '../collect-garbage/collect-garbage.js';
import { scheduledBackupRequest } from '../fire-schedule/fire-schedule.js';
import {
  createSchedule,
  deleteSchedule,
  getSchedule,
  listSchedules,
  setSchedulePaused,
} from '../schedules/schedules.js';
import { backupStatus } from './backup-status.js';
import { clusterProblem } from './backups.js';
import type { ApiDeps } from './deps.js';
import { type ApiEvent, type ApiResult, bodyOf, conflict, failure, invalid, json } from './http.js';
import { startOnce } from './starts.js';

type ScheduleApiDeps = ApiDeps;

const systemTime: Clock = systemClock;

function withTimer(deps: ScheduleApiDeps) {
  if (!deps.timer) return undefined;
  return {
    store: deps.store,
    timer: deps.timer,
    clock: deps.clock ?? systemTime,
    ...(deps.signal ? { signal: deps.signal } : {}),
  };
}

const noTimer = (): ApiResult =>
  failure({ status: 503, code: 'ServiceUnavailable', message: 'this deployment has no schedule timer' });

/** The use cases' refusals as answers; anything else is the router's to report. */
async function answer(run: () => Promise<ApiResult>): Promise<ApiResult> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof ValidationFailed) return invalid(error.problems);
    if (error instanceof AlreadyExists) return conflict('AlreadyExists', error.message);
    if (error instanceof ScheduleNotFound)
      return failure({ status: 404, code: 'NotFound', message: error.message });
    throw error;
  }
}

const view = (stored: StoredSchedule) => ({
  ...stored.schedule,
  cluster: stored.cluster,
  ...(stored.drill ? { drill: stored.drill } : {}),
});

export async function createScheduleRoute(event: ApiEvent, deps: ScheduleApiDeps): Promise<ApiResult> {
  const body = bodyOf(event);
  if (!body.ok) return body.result;
  const scheduleDeps = withTimer(deps);
  if (!scheduleDeps) return noTimer();
  return answer(async () => {
    const request = parseScheduleRequest(body.value);
    const problems = clusterProblem(request.cluster, deps.clusters);
    // A drill target's cluster is served too: a drill into no cluster would fail every week.
    if (request.drill)
      for (const p of clusterProblem(request.drill.cluster, deps.clusters))
        problems.push({ ...p, path: 'drill.cluster' });
    if (problems.length > 0) return invalid(problems);
    return json(201, view(await createSchedule(body.value, scheduleDeps)));
  });
}

export async function listSchedulesRoute(deps: ScheduleApiDeps): Promise<ApiResult> {
  const items = (await listSchedules(deps)).map(view);
  return json(200, { apiVersion: 'velero.io/v1', kind: 'ScheduleList', metadata: {}, items });
}

export function getScheduleRoute(name: string, deps: ScheduleApiDeps): Promise<ApiResult> {
  return answer(async () => json(200, view(await getSchedule(name, deps))));
}

export async function pauseScheduleRoute(options: {
  readonly name: string;
  readonly paused: boolean;
  readonly deps: ScheduleApiDeps;
}): Promise<ApiResult> {
  const scheduleDeps = withTimer(options.deps);
  if (!scheduleDeps) return noTimer();
  return answer(async () =>
    json(200, view(await setSchedulePaused({ name: options.name, paused: options.paused }, scheduleDeps))),
  );
}

export async function deleteScheduleRoute(name: string, deps: ScheduleApiDeps): Promise<ApiResult> {
  const scheduleDeps = withTimer(deps);
  if (!scheduleDeps) return noTimer();
  return answer(async () => {
    const stored = await getSchedule(name, deps);
    await deleteSchedule(name, scheduleDeps);
    return json(200, view(stored));
  });
}

/** A backup now from the Schedule's template, named as the Schedule would name it at this second. */
export function backupFromScheduleRoute(name: string, deps: ScheduleApiDeps): Promise<ApiResult> {
  return answer(async () => {
    const stored = await getSchedule(name, deps);
    const at = new Date(Math.floor((deps.clock ?? systemTime).now().getTime() / 1000) * 1000);
    const request = scheduledBackupRequest(stored, at);
    const backup = request.backup.metadata.name;
    const keys = backupKeys(backup);
    const outcome = await startOnce({
      workflow: 'backup',
      name: backup,
      request,
      takenKeys: [keys.metadata, keys.claim],
      store: deps.store,
      executions: deps.executions,
      ...(deps.signal ? { signal: deps.signal } : {}),
    });
    if (outcome === 'taken') return conflict('AlreadyExists', `a backup named "${backup}" already exists`);
    return json(202, await backupStatus(backup, deps));
  });
}

/** What the next garbage collection would delete, and why (`?dryRun=true`; a real run is the GC schedule's). */
export async function garbageRoute(event: ApiEvent, deps: ScheduleApiDeps): Promise<ApiResult> {
  const dryRun = event.queryStringParameters?.dryRun;
  if (dryRun !== 'true')
    return invalid([{ path: 'dryRun', message: 'must be true: garbage is collected by the GC schedule' }]);
  const report = await collectGarbage(
    { dryRun: true },
    {
      store: deps.store,
      executions: deps.executions,
      clock: deps.clock ?? systemTime,
      ...(deps.signal ? { signal: deps.signal } : {}),
    },
  );
  return json(200, report);
}
