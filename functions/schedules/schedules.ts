/**
 * The Schedule use cases, shared by the API (functions/api) and `lifeboat --local`: create, get,
 * list, pause, unpause and delete a Schedule, kept at `plugins/lifeboat/schedules/<name>.json`
 * and mirrored to its timer (EventBridge Scheduler in AWS). Each is idempotent: creating the same
 * Schedule again answers the stored one (and puts its timer again, so a half-done create
 * completes); a different one under a used name is AlreadyExists. The store is written before
 * the timer, so a timer never fires a Schedule that is not stored.
 */
import {
  cronOf,
  parseScheduleRequest,
  type ScheduleRequest,
  type StoredSchedule,
  storedSchedule,
} from '../../shared/contracts/schedule.js';
import { AlreadyExists, ScheduleNotFound } from '../../shared/domain/errors.js';
import { schedulerExpressions } from '../../shared/domain/schedules/scheduler-expressions.js';
import { SCHEDULES_DIR, scheduleKeys } from '../../shared/domain/storage/keys.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { ScheduleTimer } from '../../shared/ports/scheduler.js';

export interface ScheduleDeps {
  readonly store: ObjectStore;
  readonly timer: ScheduleTimer;
  readonly clock: Clock;
  readonly signal?: AbortSignal;
}

type StoreDeps = Pick<ScheduleDeps, 'store' | 'signal'>;

const withSignal = (deps: { signal?: AbortSignal }) => (deps.signal ? { signal: deps.signal } : {});

/** The stored Schedule of that name, or undefined. */
export async function readSchedule(name: string, deps: StoreDeps): Promise<StoredSchedule | undefined> {
  const body = await deps.store.get(scheduleKeys(name).schedule, withSignal(deps));
  if (!body) return undefined;
  return storedSchedule.parse(JSON.parse(Buffer.from(body).toString('utf8')));
}

export async function writeSchedule(stored: StoredSchedule, deps: StoreDeps): Promise<void> {
  await deps.store.put(scheduleKeys(stored.schedule.metadata.name).schedule, JSON.stringify(stored), {
    contentType: 'application/json',
    ...withSignal(deps),
  });
}

/** Every stored Schedule, by name. */
export async function listSchedules(deps: StoreDeps): Promise<StoredSchedule[]> {
  const keys = await deps.store.list(SCHEDULES_DIR, withSignal(deps));
  const names = keys
    .filter((k) => k.endsWith('.json'))
    .map((k) => k.slice(SCHEDULES_DIR.length, -'.json'.length));
  const stored = await Promise.all(names.map((name) => readSchedule(name, deps)));
  return stored.filter((s): s is StoredSchedule => s !== undefined);
}

export async function getSchedule(name: string, deps: StoreDeps): Promise<StoredSchedule> {
  const stored = await readSchedule(name, deps);
  if (!stored) throw new ScheduleNotFound(name);
  return stored;
}

/** What makes two create requests the same: everything but the status and creation time. */
function sameRequest(a: ScheduleRequest, b: ScheduleRequest): boolean {
  const strip = (r: ScheduleRequest) => {
    const { creationTimestamp: _, ...metadata } = r.schedule.metadata;
    return JSON.stringify({ cluster: r.cluster, metadata, spec: r.schedule.spec, drill: r.drill });
  };
  return strip(a) === strip(b);
}

/** Validates and stores a new Schedule (phase Enabled) and puts its timer. */
export async function createSchedule(input: unknown, deps: ScheduleDeps): Promise<StoredSchedule> {
  const request = parseScheduleRequest(input);
  const expressions = schedulerExpressions(cronOf(request.schedule), 'schedule.spec.schedule');
  const name = request.schedule.metadata.name;
  const existing = await readSchedule(name, deps);
  if (existing && !sameRequest(existing, request)) throw new AlreadyExists(`schedule "${name}"`);
  const stored: StoredSchedule = existing ?? {
    cluster: request.cluster,
    ...(request.drill ? { drill: request.drill } : {}),
    schedule: {
      ...request.schedule,
      apiVersion: 'velero.io/v1',
      kind: 'Schedule',
      metadata: { ...request.schedule.metadata, creationTimestamp: deps.clock.now().toISOString() },
      status: { phase: 'Enabled' },
    },
  };
  if (!existing) await writeSchedule(stored, deps);
  await deps.timer.put({
    name,
    expressions,
    enabled: stored.schedule.spec.paused !== true,
    ...withSignal(deps),
  });
  return stored;
}

/**
 * Pauses or unpauses a Schedule. Unpausing one with `skipImmediately` records the time as
 * `lastSkipped`, so that a run missed while paused is not made up (Velero).
 */
export async function setSchedulePaused(
  options: { readonly name: string; readonly paused: boolean },
  deps: ScheduleDeps,
): Promise<StoredSchedule> {
  const current = await getSchedule(options.name, deps);
  const { schedule } = current;
  const skip = !options.paused && schedule.spec.paused === true && schedule.spec.skipImmediately === true;
  const updated: StoredSchedule = {
    ...current,
    schedule: {
      ...schedule,
      spec: { ...schedule.spec, paused: options.paused },
      status: {
        ...schedule.status,
        ...(skip
          ? { lastSkipped: deps.clock.now().toISOString(), lastSkippedReason: 'skipImmediately on unpause' }
          : {}),
      },
    },
  };
  await writeSchedule(updated, deps);
  const expressions = schedulerExpressions(cronOf(schedule), 'schedule.spec.schedule');
  await deps.timer.put({ name: options.name, expressions, enabled: !options.paused, ...withSignal(deps) });
  return updated;
}

/** Removes the timer, then the Schedule; its backups stay (they expire by their TTL). */
export async function deleteSchedule(name: string, deps: ScheduleDeps): Promise<void> {
  const stored = await readSchedule(name, deps);
  await deps.timer.remove({ name, ...withSignal(deps) });
  if (stored) await deps.store.delete(scheduleKeys(name).schedule, withSignal(deps));
}
