/**
 * `lifeboat gc --local [--dry-run]`: one garbage collection run against the directory, as the
 * local server's GC timer runs it (functions/collect-garbage), its deletions run here through the
 * delete workflow before the command ends; prints the report (what was, or would be, deleted and
 * why, what was skipped and why, what failed). Exit status 1 when a deletion failed.
 */
import { collectGarbage, type GarbageReport } from '../../functions/collect-garbage/collect-garbage.js';
import { systemClock } from '../../shared/adapters/system-clock.js';
import { UsageError } from '../flags.js';
import { outputForm, printDocument } from '../output.js';
import { table } from '../render/table.js';
import { LocalExecutions } from '../server/local-executions.js';
import { localRunners } from '../server/runners.js';
import { localStore } from '../store.js';
import type { VerbCall } from '../verb-call.js';
import type { gcFlags } from './flags.js';

export function renderReport(report: GarbageReport): string {
  const rows = [
    ...report.deleted.map((d) => [d.name, report.dryRun ? 'would delete' : 'deleted', d.reasons.join('; ')]),
    ...report.skipped.map((s) => [s.name, 'skipped', s.reason]),
    ...report.failures.map((f) => [f.name, 'failed', f.error]),
  ];
  if (rows.length === 0) return 'Nothing to delete.';
  return table([['BACKUP', 'ACTION', 'WHY'], ...rows]);
}

export async function collectGarbageCommand({ values, io }: VerbCall<typeof gcFlags>): Promise<number> {
  const form = outputForm(values.output);
  const store = await localStore(values, { mustExist: true });
  const executions = new LocalExecutions(
    await localRunners({
      store,
      clusterNamed: async () => {
        throw new UsageError('garbage collection runs deletions only');
      },
      values,
    }),
  );
  const report = await collectGarbage(
    { dryRun: values['dry-run'] === true },
    { store, executions, clock: systemClock },
  );
  await executions.settled();
  if (form === 'text') io.out.write(`${renderReport(report)}\n`);
  else await printDocument({ io, form, document: report });
  return report.failures.length > 0 ? 1 : 0;
}
