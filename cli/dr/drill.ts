/**
 * `lifeboat dr drill [NAME] --from-backup B|--from-schedule S --local`: a DR drill run in this
 * process (statemachines/drill.asl.json, its restore a nested run of restore.asl.json) against the
 * kubeconfig's cluster, reading the backup from --dir. Prints the drill's report as a summary
 * (or JSON/YAML) and publishes its event as a deployment does. Exit 0 when the drill Completed.
 */
import { randomUUID } from 'node:crypto';
import { readDrillReport } from '../../functions/common/drill-records.js';
import { reachableCluster } from '../cluster.js';
import { executionFailure } from '../execution-failure.js';
import { runLocalDrill } from '../local/drill-runtime.js';
import { endOf, publishLocalOutcome } from '../local/events.js';
import { localRepository, repositoryKeyFile } from '../local/local-data-mover.js';
import { outputForm, printDocument } from '../output.js';
import { localStore } from '../store.js';
import type { VerbCall } from '../verb-call.js';
import type { drDrillFlags } from './flags.js';
import { renderDrill } from './render.js';
import { defaultDrillName, drillRequest } from './request.js';

export async function runDrill({ name, values, io }: VerbCall<typeof drDrillFlags>): Promise<number> {
  const form = outputForm(values.output);
  const drillName = name ?? defaultDrillName(values, new Date());
  const request = drillRequest({ name: drillName, values });
  const store = await localStore(values, { mustExist: true });
  const cluster = await reachableCluster(values);
  io.err.write(`Drill "${drillName}" started (local, reading ${store.location}).\n`);
  const executionName = `local-${randomUUID()}`;
  const ended = await runLocalDrill(request, {
    cluster,
    store,
    executionName,
    dataMover: {
      repository: localRepository(store, repositoryKeyFile(values['repository-key-file'])),
      ...(process.env.AWS_REGION ? { region: process.env.AWS_REGION } : {}),
    },
  }).then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  await publishLocalOutcome({
    store,
    execution: {
      workflow: 'drill',
      name: executionName,
      input: JSON.stringify({ request }),
      ...endOf(ended),
    },
    warn: (m) => io.err.write(`${m}\n`),
  });
  if (!ended.ok) return executionFailure({ what: `Drill "${drillName}"`, io })(ended.error);
  const report = await readDrillReport(store, drillName);
  if (!report) {
    io.err.write(`lifeboat: drill "${drillName}" left no report\n`);
    return 1;
  }
  if (form === 'text') io.out.write(renderDrill(report));
  else await printDocument({ io, form, document: report });
  return report.phase === 'Completed' ? 0 : 1;
}
