/**
 * `lifeboat dr get [NAME]` and `dr describe NAME` with --local: the drill reports recorded in the
 * directory, as a table or one report's summary (or JSON/YAML). A report that cannot be read is
 * named, never shown half.
 */
import { drillNames, readDrillReport } from '../../functions/common/drill-records.js';
import type { DrillReport } from '../../shared/domain/drills/report.js';
import { outputForm, printDocument } from '../output.js';
import { directoryOf, localStore } from '../store.js';
import type { VerbCall } from '../verb-call.js';
import type { drDescribeFlags, drGetFlags } from './flags.js';
import { renderDrill, renderDrillTable } from './render.js';

export async function getDrills({ name, values, io }: VerbCall<typeof drGetFlags>): Promise<number> {
  const form = outputForm(values.output);
  const store = await localStore(values, { mustExist: true });
  const names = name ? [name] : await drillNames(store);
  const reports: DrillReport[] = [];
  for (const n of names) {
    const report = await readDrillReport(store, n);
    if (report) reports.push(report);
  }
  if (name && reports.length === 0) {
    io.err.write(`lifeboat: drill "${name}" not found in ${directoryOf(store)}\n`);
    return 1;
  }
  if (form === 'text') io.out.write(renderDrillTable(reports));
  else await printDocument({ io, form, document: name ? reports[0] : reports });
  return 0;
}

export async function describeDrill({
  name = '',
  values,
  io,
}: VerbCall<typeof drDescribeFlags>): Promise<number> {
  const form = outputForm(values.output);
  const store = await localStore(values, { mustExist: true });
  const report = await readDrillReport(store, name);
  if (!report) {
    io.err.write(`lifeboat: drill "${name}" not found in ${directoryOf(store)}\n`);
    return 1;
  }
  if (form === 'text') io.out.write(renderDrill(report));
  else await printDocument({ io, form, document: report });
  return 0;
}
