/**
 * `lifeboat schedule create|get|describe|pause|unpause|delete --local`: the Schedule use cases
 * (functions/schedules) against the directory. Locally the timer is `lifeboat server --local`,
 * which reads the Schedules from the directory, so the timer port here has nothing to do.
 * Invalid input is a usage error naming the field; nothing stored is changed then.
 */
import {
  createSchedule,
  deleteSchedule,
  getSchedule,
  listSchedules,
  setSchedulePaused,
} from '../../functions/schedules/schedules.js';
import { systemClock } from '../../shared/adapters/system-clock.js';
import type { StoredSchedule } from '../../shared/contracts/schedule.js';
import { AlreadyExists, ScheduleNotFound, ValidationFailed } from '../../shared/domain/errors.js';
import type { ScheduleTimer } from '../../shared/ports/scheduler.js';
import { UsageError } from '../flags.js';
import { outputForm, printDocument } from '../output.js';
import { table } from '../render/table.js';
import { localStore } from '../store.js';
import type { VerbCall } from '../verb-call.js';
import type {
  scheduleChangeFlags,
  scheduleCreateFlags,
  scheduleDeleteFlags,
  scheduleGetFlags,
} from './flags.js';
import { scheduleRequest } from './request.js';

/** The local server's timers read the store: nothing to put or remove. */
const storeReadTimer: ScheduleTimer = { put: async () => undefined, remove: async () => undefined };

async function depsOf(values: { local?: boolean; dir?: string }, mustExist: boolean) {
  return { store: await localStore(values, { mustExist }), timer: storeReadTimer, clock: systemClock };
}

/** A use case's refusals as the command reports them: exit 1 with the reason. */
async function reported(io: VerbCall<never>['io'], run: () => Promise<number>): Promise<number> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof ValidationFailed)
      throw new UsageError(error.problems.map((p) => `${p.path}: ${p.message}`).join('\n'));
    if (error instanceof AlreadyExists || error instanceof ScheduleNotFound) {
      io.err.write(`lifeboat: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

function render(schedules: readonly StoredSchedule[]): string {
  const rows = schedules.map(({ schedule: s }) => [
    s.metadata.name,
    s.status?.phase ?? 'New',
    s.spec.schedule,
    s.spec.paused ? 'true' : 'false',
    s.status?.lastBackupName ?? '',
    s.status?.lastSkipped ? `${s.status.lastSkipped} (${s.status.lastSkippedReason ?? ''})` : '',
  ]);
  return table([['NAME', 'STATUS', 'SCHEDULE', 'PAUSED', 'LAST BACKUP', 'LAST SKIPPED'], ...rows]);
}

export async function print(
  io: VerbCall<never>['io'],
  output: string | undefined,
  schedules: StoredSchedule[],
  one: boolean,
) {
  const form = outputForm(output);
  if (form === 'text') io.out.write(`${render(schedules)}\n`);
  else
    await printDocument({
      io,
      form,
      document: one ? schedules[0]?.schedule : schedules.map((s) => s.schedule),
    });
}

export async function createScheduleCommand({ name = '', values, io }: VerbCall<typeof scheduleCreateFlags>) {
  const request = scheduleRequest({ name, values });
  return reported(io, async () => {
    const stored = await createSchedule(request, await depsOf(values, false));
    await print(io, values.output, [stored], true);
    return 0;
  });
}

export async function getSchedulesCommand({ name, values, io }: VerbCall<typeof scheduleGetFlags>) {
  return reported(io, async () => {
    const deps = await depsOf(values, true);
    const found = name ? [await getSchedule(name, deps)] : await listSchedules(deps);
    await print(io, values.output, found, name !== undefined);
    return 0;
  });
}

export async function describeScheduleCommand({ name = '', values, io }: VerbCall<typeof scheduleGetFlags>) {
  return reported(io, async () => {
    const stored = await getSchedule(name, await depsOf(values, true));
    await printDocument({ io, form: values.output === 'json' ? 'json' : 'yaml', document: stored });
    return 0;
  });
}

const pausing =
  (paused: boolean) =>
  async ({ name = '', values, io }: VerbCall<typeof scheduleChangeFlags>): Promise<number> =>
    reported(io, async () => {
      const stored = await setSchedulePaused({ name, paused }, await depsOf(values, true));
      await print(io, values.output, [stored], true);
      return 0;
    });

export const pauseScheduleCommand = pausing(true);
export const unpauseScheduleCommand = pausing(false);

export async function deleteScheduleCommand({ name = '', values, io }: VerbCall<typeof scheduleDeleteFlags>) {
  if (!values.confirm) throw new UsageError('schedule delete needs --confirm');
  return reported(io, async () => {
    const deps = await depsOf(values, true);
    await getSchedule(name, deps);
    await deleteSchedule(name, deps);
    io.out.write(`Schedule ${name} deleted; its backups stay until they expire.\n`);
    return 0;
  });
}
