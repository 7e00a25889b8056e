/**
 * `lifeboat restore create [NAME] --from-backup B --local`: a Restore request from Velero's
 * flags, checked, then run in this process against the kubeconfig's cluster (its server checked
 * first), reading the backup from --dir (and volume data from the data mover's repository
 * there). Prints the outcome, and every warning and error with its text; a dry run prints what
 * would happen to each item, after the same checks a real run makes (the name included).
 */
import { randomUUID } from 'node:crypto';
import { readStoredJson } from '../../shared/adapters/stored-file-reader.js';
import { storedResults } from '../../shared/contracts/backup-files.js';
import { validateRestoreRequest } from '../../shared/contracts/restore-request.js';
import { restoreFile } from '../../shared/domain/storage/stored-files.js';
import { reachableCluster } from '../cluster.js';
import { executionFailure } from '../execution-failure.js';
import { endOf, publishLocalOutcome } from '../local/events.js';
import { localRepository, repositoryKeyFile } from '../local/local-data-mover.js';
import { runLocalRestore } from '../local/restore-runtime.js';
import { outputForm, printDocument } from '../output.js';
import { renderResults } from '../render/results.js';
import { refuseProblems } from '../request-check.js';
import { localStore } from '../store.js';
import type { Io, VerbCall } from '../verb-call.js';
import type { restoreCreateFlags } from './flags.js';
import { defaultRestoreName, restoreRequest } from './request.js';

/** What FinalizeRestore returns, and a dry run's plan: the parts printed here. */
interface RestoreOutcome {
  readonly phase: string;
  readonly created: number;
  readonly updated: number;
  readonly skipped: number;
  readonly failed: number;
  readonly errors: number;
  readonly warnings: number;
}
interface DryRunPlan {
  readonly preview?: readonly { phase: string; item: string; action: string; reason?: string }[];
  readonly warnings?: readonly string[];
}

export async function createRestore({
  name,
  values,
  io,
}: VerbCall<typeof restoreCreateFlags>): Promise<number> {
  const form = outputForm(values.output);
  const restoreName = name ?? defaultRestoreName(values, new Date());
  const request = restoreRequest({ name: restoreName, values });
  const checked = validateRestoreRequest(request);
  if (!checked.ok) refuseProblems(checked.problems);
  const store = await localStore(values, { mustExist: true });
  const cluster = await reachableCluster(values);
  io.err.write(`Restore request "${restoreName}" submitted (local, reading ${store.location}).\n`);
  const executionName = `local-${randomUUID()}`;
  const run = runLocalRestore(request, {
    cluster,
    store,
    executionName,
    // Volumes in the data mover's repository: the one in --dir, its key file outside it.
    dataMover: {
      repository: localRepository(store, repositoryKeyFile(values['repository-key-file'])),
      ...(process.env.AWS_REGION ? { region: process.env.AWS_REGION } : {}),
    },
    onPhase: (phase, t) =>
      io.err.write(
        `  ${phase}: ${t.created} created, ${t.updated} updated, ${t.skipped} skipped, ${t.failed} failed\n`,
      ),
  });
  const ended = await run.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  // A dry run restores nothing and records nothing: it has no event.
  if (!values['dry-run'])
    await publishLocalOutcome({
      store,
      execution: {
        workflow: 'restore',
        name: executionName,
        input: JSON.stringify({ request }),
        ...endOf(ended),
      },
      warn: (m) => io.err.write(`${m}\n`),
    });
  if (!ended.ok) return executionFailure({ what: `Restore "${restoreName}"`, io })(ended.error);
  const result = ended.value;
  if (form !== 'text') await printDocument({ io, form, document: result });
  if (values['dry-run']) return printDryRun({ plan: result as DryRunPlan, text: form === 'text', io });
  const outcome = result as unknown as RestoreOutcome;
  if (form === 'text') printRestored({ name: restoreName, outcome, io });
  if (outcome.warnings > 0 || outcome.errors > 0) {
    const results = await readStoredJson(store, restoreFile(restoreName, 'results'), {
      schema: storedResults,
      shape: 'a results file',
    });
    if (results) io.err.write(renderResults({ results, counts: outcome }).join('\n'));
  }
  return outcome.phase === 'Completed' ? 0 : 1;
}

/** `--dry-run`: what the restore would do to each item, one line each, and its warnings. */
function printDryRun(dryRun: { readonly plan: DryRunPlan; readonly text: boolean; readonly io: Io }): number {
  const { io, plan } = dryRun;
  if (dryRun.text)
    for (const p of plan.preview ?? [])
      io.out.write(`${p.action.padEnd(7)} ${p.phase} ${p.item}${p.reason ? `  (${p.reason})` : ''}\n`);
  for (const warning of plan.warnings ?? []) io.err.write(`Warning: ${warning}\n`);
  return 0;
}

/** The restore's outcome in one line. */
function printRestored(restored: {
  readonly name: string;
  readonly outcome: RestoreOutcome;
  readonly io: Io;
}): void {
  const r = restored.outcome;
  const problems = [
    ...(r.errors ? [`${r.errors} error${r.errors > 1 ? 's' : ''}`] : []),
    ...(r.warnings ? [`${r.warnings} warning${r.warnings > 1 ? 's' : ''}`] : []),
  ];
  restored.io.out.write(
    `Restore "${restored.name}": ${r.phase} (${r.created} created, ${r.updated} updated, ${r.skipped} skipped, ${r.failed} failed${problems.length ? `; ${problems.join(', ')}` : ''}).\n`,
  );
}
