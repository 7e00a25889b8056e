/**
 * What FinalizeRestore reports of the restored pods' exec hooks: their log lines (command,
 * stdout, stderr, failures), every failed hook as an error of its namespace (Velero's finalizer
 * adds the hook tracker's errors to the restore's), and `status.hookStatus` counts. A pod whose
 * hooks RestoreHooks never settled is reported too, never left out. A recipe's hook steps come
 * first, in workflow order, with the same counts and errors. Reads the working data only.
 */
import { gunzipSync } from 'node:zlib';
import pLimit from 'p-limit';
import {
  type PodHooksOutcome,
  podHooksOutcome,
  type RestoreRun,
  restoreRecipeHookResult,
} from '../../shared/contracts/restore-run.js';
import { restoreWorkKeys } from '../../shared/domain/storage/keys.js';
import type { LogEvent } from '../../shared/domain/storage/log.js';
import { emptyResults, mergeResults, type Results, resultOf } from '../../shared/domain/storage/results.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { podOfKey } from '../restore-hooks/pod-hook-records.js';

export interface HookReport {
  readonly log: readonly LogEvent[];
  readonly results: Results;
  /** Velero `status.hookStatus`. */
  readonly hookStatus: { readonly hooksAttempted: number; readonly hooksFailed: number };
}

export async function hookReport(options: {
  store: ObjectStore;
  run: RestoreRun;
  time: string;
}): Promise<HookReport> {
  const { store, run } = options;
  const work = restoreWorkKeys(run);
  const [podKeys, doneKeys] = await Promise.all([
    store.list(work.podHooksDir),
    store.list(work.podHooksDoneDir),
  ]);
  const read = pLimit(16);
  const outcomes = await Promise.all(
    doneKeys.map((key) =>
      read(async () => {
        const raw = await store.get(key);
        return raw ? podHooksOutcome.parse(JSON.parse(gunzipSync(raw).toString('utf8'))) : undefined;
      }),
    ),
  );
  const settled = new Set(
    doneKeys.flatMap((key) => podOfKey({ key, dir: work.podHooksDoneDir, suffix: '.json.gz' }) ?? []),
  );
  const log: LogEvent[] = [];
  let results = emptyResults;
  let hooksAttempted = 0;
  let hooksFailed = 0;
  // A recipe's hook steps, in step order (the keys sort so): their own lines, then their pods'.
  const steps = (await store.list(work.recipeHookResultsDir)).sort();
  const recipePods: PodHooksOutcome[] = [];
  for (const key of steps) {
    const raw = await store.get(key);
    if (!raw) continue;
    const step = restoreRecipeHookResult.parse(JSON.parse(gunzipSync(raw).toString('utf8')));
    log.push(...step.log);
    for (const e of step.errors)
      results = mergeResults(results, {
        errors: resultOf({ scope: e.namespace ? { namespace: e.namespace } : 'velero', message: e.message }),
        warnings: {},
      });
    for (const message of step.warnings)
      results = mergeResults(results, { errors: {}, warnings: resultOf({ scope: 'velero', message }) });
    recipePods.push(...step.pods);
  }
  const settledOutcomes = outcomes.filter((o): o is PodHooksOutcome => o !== undefined);
  for (const outcome of [...recipePods, ...settledOutcomes]) {
    log.push(...outcome.log);
    for (const run of outcome.runs) {
      hooksAttempted++;
      if (run.status !== 'failed') continue;
      hooksFailed++;
      results = mergeResults(results, {
        errors: resultOf({
          scope: { namespace: outcome.namespace },
          message:
            run.failure?.message ?? `hook ${run.hookName} in pod ${outcome.namespace}/${outcome.name} failed`,
        }),
        warnings: {},
      });
    }
  }
  for (const key of podKeys) {
    const id = podOfKey({ key, dir: work.podHooksDir, suffix: '.json' });
    if (!id || settled.has(id)) continue;
    const [namespace = '', name = ''] = id.split('/');
    const message = `the exec hooks of pod ${id} were not all settled when the restore finished`;
    log.push({
      time: options.time,
      level: 'error',
      msg: message,
      fields: { restore: run.name, resource: 'pods', namespace, name },
    });
    results = mergeResults(results, { errors: resultOf({ scope: { namespace }, message }), warnings: {} });
  }
  return { log, results, hookStatus: { hooksAttempted, hooksFailed } };
}
