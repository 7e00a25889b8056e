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
  const outcomes = await readSettledPods({ store, keys: doneKeys });
  const settled = new Set(
    doneKeys.flatMap((key) => podOfKey({ key, dir: work.podHooksDoneDir, suffix: '.json.gz' }) ?? []),
  );
  const tally: HookTally = { log: [], results: emptyResults, hooksAttempted: 0, hooksFailed: 0 };
  const recipePods = await addRecipeHookSteps(tally, { store, run });
  const settledOutcomes = outcomes.filter((o): o is PodHooksOutcome => o !== undefined);
  for (const outcome of [...recipePods, ...settledOutcomes]) addPodHookRuns(tally, outcome);
  for (const key of podKeys) {
    const id = podOfKey({ key, dir: work.podHooksDir, suffix: '.json' });
    if (!id || settled.has(id)) continue;
    addUnsettledPod(tally, { id, run, time: options.time });
  }
  const { log, results, hooksAttempted, hooksFailed } = tally;
  return { log, results, hookStatus: { hooksAttempted, hooksFailed } };
}

/** The report as it is gathered: log lines and results in report order, and the hook counts. */
interface HookTally {
  readonly log: LogEvent[];
  results: Results;
  hooksAttempted: number;
  hooksFailed: number;
}

/** What RestoreHooks wrote of each pod whose hooks it settled, read in parallel. */
async function readSettledPods(options: {
  store: ObjectStore;
  keys: readonly string[];
}): Promise<(PodHooksOutcome | undefined)[]> {
  const { store } = options;
  const read = pLimit(16);
  return Promise.all(
    options.keys.map((key) =>
      read(async () => {
        const raw = await store.get(key);
        return raw ? podHooksOutcome.parse(JSON.parse(gunzipSync(raw).toString('utf8'))) : undefined;
      }),
    ),
  );
}

/**
 * A recipe's hook steps, in step order (the keys sort so): their own lines and problems now;
 * their pods, returned, come before the other pods'.
 */
async function addRecipeHookSteps(
  tally: HookTally,
  options: { store: ObjectStore; run: RestoreRun },
): Promise<PodHooksOutcome[]> {
  const { store } = options;
  const steps = (await store.list(restoreWorkKeys(options.run).recipeHookResultsDir)).sort();
  const recipePods: PodHooksOutcome[] = [];
  for (const key of steps) {
    const raw = await store.get(key);
    if (!raw) continue;
    const step = restoreRecipeHookResult.parse(JSON.parse(gunzipSync(raw).toString('utf8')));
    tally.log.push(...step.log);
    for (const e of step.errors)
      tally.results = mergeResults(tally.results, {
        errors: resultOf({ scope: e.namespace ? { namespace: e.namespace } : 'velero', message: e.message }),
        warnings: {},
      });
    for (const message of step.warnings)
      tally.results = mergeResults(tally.results, {
        errors: {},
        warnings: resultOf({ scope: 'velero', message }),
      });
    recipePods.push(...step.pods);
  }
  return recipePods;
}

/** A pod's hook lines; each hook run counted, and a failed one an error of the pod's namespace. */
function addPodHookRuns(tally: HookTally, outcome: PodHooksOutcome): void {
  tally.log.push(...outcome.log);
  for (const run of outcome.runs) {
    tally.hooksAttempted++;
    if (run.status !== 'failed') continue;
    tally.hooksFailed++;
    tally.results = mergeResults(tally.results, {
      errors: resultOf({
        scope: { namespace: outcome.namespace },
        message:
          run.failure?.message ?? `hook ${run.hookName} in pod ${outcome.namespace}/${outcome.name} failed`,
      }),
      warnings: {},
    });
  }
}

/** A pod whose hooks RestoreHooks never settled: an error, never left out. */
function addUnsettledPod(tally: HookTally, options: { id: string; run: RestoreRun; time: string }): void {
  const { id } = options;
  const [namespace = '', name = ''] = id.split('/');
  const message = `the exec hooks of pod ${id} were not all settled when the restore finished`;
  tally.log.push({
    time: options.time,
    level: 'error',
    msg: message,
    fields: { restore: options.run.name, resource: 'pods', namespace, name },
  });
  tally.results = mergeResults(tally.results, {
    errors: resultOf({ scope: { namespace }, message }),
    warnings: {},
  });
}
