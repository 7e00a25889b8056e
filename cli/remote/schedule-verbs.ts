/**
 * `lifeboat schedule create|get|describe|pause|unpause|delete` and `lifeboat gc --dry-run`
 * against a deployment: the same requests and printing as --local, through the API's schedule
 * routes (docs/api.yaml). A real GC run is the deployment's GC schedule's, so `gc` needs
 * --dry-run here.
 */
import type { GarbageReport } from '../../functions/collect-garbage/collect-garbage.js';
import type { Schedule, StoredSchedule } from '../../shared/contracts/schedule.js';
import { UsageError } from '../flags.js';
import { outputForm, printDocument } from '../output.js';
import type {
  gcFlags,
  scheduleChangeFlags,
  scheduleCreateFlags,
  scheduleDeleteFlags,
  scheduleGetFlags,
} from '../schedule/flags.js';
import { renderReport } from '../schedule/gc.js';
import { print } from '../schedule/local.js';
import { scheduleRequest } from '../schedule/request.js';
import type { VerbCall } from '../verb-call.js';
import { remote } from './common.js';

type Answered = Schedule & { readonly cluster: string; readonly drill?: StoredSchedule['drill'] };

const schedulePath = (name: string, rest = '') => `/schedules/${encodeURIComponent(name)}${rest}`;
const stored = ({ cluster, drill, ...schedule }: Answered): StoredSchedule => ({
  cluster,
  ...(drill ? { drill } : {}),
  schedule,
});

export function remoteCreateSchedule({ name = '', values, io }: VerbCall<typeof scheduleCreateFlags>) {
  const request = scheduleRequest({ name, values });
  return remote(values, io, async (api) => {
    const created = await api.call<Answered>({ method: 'POST', path: '/schedules', body: request });
    await print(io, values.output, [stored(created)], true);
    return 0;
  });
}

export function remoteGetSchedules({ name, values, io }: VerbCall<typeof scheduleGetFlags>) {
  return remote(values, io, async (api) => {
    const found = name
      ? [await api.call<Answered>({ method: 'GET', path: schedulePath(name) })]
      : (await api.call<{ items: Answered[] }>({ method: 'GET', path: '/schedules' })).items;
    await print(io, values.output, found.map(stored), name !== undefined);
    return 0;
  });
}

export function remoteDescribeSchedule({ name = '', values, io }: VerbCall<typeof scheduleGetFlags>) {
  return remote(values, io, async (api) => {
    const found = await api.call<Answered>({ method: 'GET', path: schedulePath(name) });
    await printDocument({ io, form: values.output === 'json' ? 'json' : 'yaml', document: stored(found) });
    return 0;
  });
}

const pausing =
  (paused: boolean) =>
  ({ name = '', values, io }: VerbCall<typeof scheduleChangeFlags>): Promise<number> =>
    remote(values, io, async (api) => {
      const path = schedulePath(name, paused ? '/pause' : '/unpause');
      await print(io, values.output, [stored(await api.call<Answered>({ method: 'POST', path }))], true);
      return 0;
    });

export const remotePauseSchedule = pausing(true);
export const remoteUnpauseSchedule = pausing(false);

export function remoteDeleteSchedule({ name = '', values, io }: VerbCall<typeof scheduleDeleteFlags>) {
  if (!values.confirm) throw new UsageError('schedule delete needs --confirm');
  return remote(values, io, async (api) => {
    await api.call<Answered>({ method: 'DELETE', path: schedulePath(name) });
    io.out.write(`Schedule ${name} deleted; its backups stay until they expire.\n`);
    return 0;
  });
}

export function remoteCollectGarbage({ values, io }: VerbCall<typeof gcFlags>) {
  if (values['dry-run'] !== true)
    throw new UsageError('gc against a deployment needs --dry-run: its GC schedule runs the real one');
  return remote(values, io, async (api) => {
    const report = await api.call<GarbageReport>({ method: 'GET', path: '/gc', query: { dryRun: 'true' } });
    const form = outputForm(values.output);
    if (form === 'text') io.out.write(`${renderReport(report)}\n`);
    else await printDocument({ io, form, document: report });
    return 0;
  });
}
