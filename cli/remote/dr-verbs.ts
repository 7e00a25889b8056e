/**
 * `lifeboat dr drill|get|describe` against a deployment: the same drill request as --local
 * (checked the same way, named `<backup or schedule>-drill-YYYYMMDDhhmmss` when not named) sent to
 * POST /drills and followed until the drill ends, then the same report; the reports read through
 * GET /drills[/{name}]. Exit 0 when the drill Completed, as with --local.
 */
import type { DrillReport } from '../../shared/domain/drills/report.js';
import type { drDescribeFlags, drDrillFlags, drGetFlags } from '../dr/flags.js';
import { renderDrill, renderDrillTable } from '../dr/render.js';
import { defaultDrillName, drillRequest } from '../dr/request.js';
import { outputForm, printDocument } from '../output.js';
import type { Io, VerbCall } from '../verb-call.js';
import { clusterFor, remote, waitFor } from './common.js';

/** A report, or what the API says of a drill before (or without) one. */
type Answered =
  | DrillReport
  | { readonly name: string; readonly phase: 'New' | 'Failed'; readonly failureReason?: string };

const drillPath = (name: string) => `/drills/${encodeURIComponent(name)}`;
const ended = (r: Answered): boolean => r.phase === 'Completed' || r.phase === 'Failed';
const isReport = (r: Answered): r is DrillReport => 'backup' in r;

async function printReport(io: Io, output: string | undefined, report: DrillReport): Promise<void> {
  const form = outputForm(output);
  if (form === 'text') io.out.write(renderDrill(report));
  else await printDocument({ io, form, document: report });
}

export function remoteRunDrill({ name, values, io }: VerbCall<typeof drDrillFlags>): Promise<number> {
  outputForm(values.output);
  const drillName = name ?? defaultDrillName(values, new Date());
  return remote(values, io, async (api) => {
    const cluster = await clusterFor(api, values.cluster);
    const request = drillRequest({ name: drillName, values: { ...values, cluster } });
    await api.call<Answered>({ method: 'POST', path: '/drills', body: request });
    io.err.write(`Drill "${drillName}" started through ${api.endpoint} (cluster ${cluster}).\n`);
    const report = await waitFor({
      get: () => api.call<Answered>({ method: 'GET', path: drillPath(drillName) }),
      done: ended,
      key: (r) => r.phase,
      onChange: (r) => io.err.write(`  ${r.phase}\n`),
    });
    if (!isReport(report)) {
      io.err.write(`Drill "${drillName}": ${report.phase}\n${report.failureReason ?? ''}\n`);
      return 1;
    }
    await printReport(io, values.output, report);
    return report.phase === 'Completed' ? 0 : 1;
  });
}

export function remoteGetDrills({ name, values, io }: VerbCall<typeof drGetFlags>): Promise<number> {
  const form = outputForm(values.output);
  return remote(values, io, async (api) => {
    const reports = name
      ? [await api.call<Answered>({ method: 'GET', path: drillPath(name) })].filter(isReport)
      : (await api.call<{ items: DrillReport[] }>({ method: 'GET', path: '/drills' })).items;
    if (form === 'text') io.out.write(renderDrillTable(reports));
    else await printDocument({ io, form, document: name ? reports[0] : reports });
    return 0;
  });
}

export function remoteDescribeDrill({ name = '', values, io }: VerbCall<typeof drDescribeFlags>) {
  return remote(values, io, async (api) => {
    const answered = await api.call<Answered>({ method: 'GET', path: drillPath(name) });
    if (isReport(answered)) await printReport(io, values.output, answered);
    else io.out.write(`Drill "${name}": ${answered.phase}\n${answered.failureReason ?? ''}\n`);
    return 0;
  });
}
