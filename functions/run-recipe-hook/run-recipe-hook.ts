/**
 * RunRecipeHook: one hook step of a recipe's backup workflow (docs/recipes.md). Runs the hook's
 * commands, in order, in each Running pod it selects within the backup's namespaces (or the
 * first one, singlePodOnly) — the pods at once, each pod's commands one after another — through
 * the exec API, and records a result beside the ItemBlock messages' results (`<attempt>-s<step>-
 * hook`): stdout/stderr lines, errors, hook counts. When the step failed with onError Fail, it
 * throws RecipeStepFailed once the result is written: the workflow stops there.
 * A step that already has a result (run by the hook runner, or an earlier attempt) is not run
 * again: its recorded verdict is returned. Pure data in, one result out; never logs output
 * anywhere but the backup log.
 */
import { promisify } from 'node:util';
import { gunzip as gunzipCallback, gzip as gzipCallback } from 'node:zlib';
import { backupRequest, toBackupPlan } from '../../shared/contracts/backup-request.js';
import {
  type BackupRun,
  collectedSummary,
  type MessageResult,
  messageResult,
} from '../../shared/contracts/backup-run.js';
import type { Recipe } from '../../shared/contracts/recipe.js';
import type { RecipeStepRef } from '../../shared/contracts/recipe-run.js';
import type { BackupPlan } from '../../shared/domain/backup/plan.js';
import { LifeboatError, RecipeStepFailed } from '../../shared/domain/errors.js';
import type { HookPhase } from '../../shared/domain/hooks/annotations.js';
import { type HookPod, hookPodOf } from '../../shared/domain/hooks/backup.js';
import {
  type HookRun,
  hookLabel,
  hookRunEvents,
  hookStatusOf,
  type PodHooksOutcome,
  runPodHooks,
} from '../../shared/domain/hooks/plan.js';
import type { ApiResource } from '../../shared/domain/kubernetes/api-resources.js';
import { includesEverything } from '../../shared/domain/kubernetes/includes-excludes.js';
import {
  type RecipeHookTargets,
  recipeHookTargets,
  recipeStepPhase,
} from '../../shared/domain/recipes/hooks.js';
import { backupWorkKeys, recipeStepMessagePrefix } from '../../shared/domain/storage/keys.js';
import { type LogEvent, logTextOf } from '../../shared/domain/storage/log.js';
import { emptyResults, mergeResults, type Results, resultOf } from '../../shared/domain/storage/results.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { Cluster } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { PodExec } from '../../shared/ports/pod-exec.js';
import { readRecipe } from '../collect-recipe-items/resolve-recipe.js';

const gzip = promisify(gzipCallback);
const gunzip = promisify(gunzipCallback);

const PODS: ApiResource = {
  group: '',
  version: 'v1',
  resource: 'pods',
  kind: 'Pod',
  shortNames: ['po'],
  namespaced: true,
  verbs: ['list'],
};

export interface RunRecipeHookDeps {
  readonly store: ObjectStore;
  readonly clock: Clock;
  readonly cluster: Pick<Cluster, 'listPage'>;
  readonly podExecFor: (cluster: string) => Promise<PodExec>;
  readonly signal?: AbortSignal;
}

/** The pods of the given namespaces: each one listed when they are named, else all (restore hook steps too). */
export async function listPods(options: {
  cluster: Pick<Cluster, 'listPage'>;
  namespaces: { includes: readonly string[] };
  signal?: AbortSignal;
}): Promise<HookPod[]> {
  const named = options.namespaces.includes.filter((n) => !/[*?[]/.test(n));
  const scopes =
    includesEverything({ includes: options.namespaces.includes, excludes: [] }) ||
    named.length !== options.namespaces.includes.length
      ? [undefined]
      : named;
  const pods: HookPod[] = [];
  for (const namespace of scopes) {
    let continueToken: string | undefined;
    do {
      const page = await options.cluster.listPage({
        resource: PODS,
        limit: 500,
        ...(namespace ? { namespace } : {}),
        ...(continueToken ? { continueToken } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      pods.push(...page.items.map(hookPodOf));
      continueToken = page.continueToken;
    } while (continueToken);
  }
  return pods;
}

async function earlierResult(
  store: ObjectStore,
  key: string,
  signal?: AbortSignal,
): Promise<MessageResult | undefined> {
  const raw = await store.get(key, { signal });
  return raw ? messageResult.parse(JSON.parse((await gunzip(raw)).toString('utf8'))) : undefined;
}

export async function runRecipeHook(
  input: { run: BackupRun; step: RecipeStepRef },
  deps: RunRecipeHookDeps,
): Promise<{ hooks: { attempted: number; failed: number } }> {
  const { run, step } = input;
  const work = backupWorkKeys(run);
  const { attempt } = collectedSummary.parse(await readWorkData({ run, key: work.collected, deps }));
  const resultId = `${recipeStepMessagePrefix(attempt, step.index)}hook`;
  const resultKey = work.messageResult(resultId);
  const earlier = await earlierResult(deps.store, resultKey, deps.signal);
  if (earlier) return verdictOf(earlier, step);

  const result = await runHookStep({ run, step, resultId, deps });
  await deps.store.put(resultKey, await gzip(JSON.stringify(result)), { contentType: 'application/gzip' });
  return verdictOf(result, step);
}

/** JSON the earlier states kept in the run's working data; missing, the run cannot go on. */
async function readWorkData(options: {
  run: BackupRun;
  key: string;
  deps: RunRecipeHookDeps;
}): Promise<unknown> {
  const { run, key, deps } = options;
  const raw = await deps.store.get(key, { signal: deps.signal });
  if (!raw) throw new LifeboatError(`${key} of backup ${run.name} is missing from the working data`);
  return JSON.parse(Buffer.from(raw).toString('utf8'));
}

/** The step's hook counts; throws RecipeStepFailed when it stops the workflow (onError Fail). */
function verdictOf(
  result: MessageResult,
  step: RecipeStepRef,
): { hooks: { attempted: number; failed: number } } {
  if (result.stopsWorkflow)
    throw new RecipeStepFailed(
      `recipe hook ${step.name} (step ${step.index}) failed with onError Fail: the workflow stops here`,
    );
  return { hooks: result.hooks ?? { attempted: 0, failed: 0 } };
}

/** The step's log lines and errors/warnings, gathered as it runs. */
interface StepLog {
  readonly log: LogEvent[];
  results: Results;
}

/** Runs the step's hook in each pod it targets and returns the step's result, not yet written. */
async function runHookStep(options: {
  run: BackupRun;
  step: RecipeStepRef;
  resultId: string;
  deps: RunRecipeHookDeps;
}): Promise<MessageResult> {
  const { run, step, deps } = options;
  const { hook, namespaces, phase } = await readHookStep(options);
  const now = () => deps.clock.now().toISOString();
  const stepFields = () => ({ backup: run.name, step: step.index, hook: hook.name });
  const steplog: StepLog = {
    log: [{ time: now(), level: 'info', msg: 'Recipe hook step started', fields: stepFields() }],
    results: emptyResults,
  };
  const pods = await listPods({
    cluster: deps.cluster,
    namespaces,
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  const targets = recipeHookTargets({ hook, pods, namespaces, phase });
  noteTargetProblems({ targets, steplog, fields: stepFields(), now });
  const outcomes = await execHooks({ targets, run, deps });
  const runs: HookRun[] = outcomes.flatMap((o) => o.runs);
  noteRuns({ runs, steplog, backup: run.name, now });
  const stops = Boolean(targets.failure) || outcomes.some((o) => o.failed);
  if (stops)
    steplog.log.push({
      time: now(),
      level: 'info',
      msg: 'Recipe workflow stops: a hook with onError Fail failed',
      fields: stepFields(),
    });
  const counts = hookStatusOf(runs);
  const { text: logText, levels: logLevels } = logTextOf(steplog.log);
  return {
    messageId: options.resultId,
    items: [],
    fragmentKey: null,
    ...steplog.results,
    logText,
    logLevels,
    hooks: { attempted: counts.hooksAttempted, failed: counts.hooksFailed },
    ...(stops ? { stopsWorkflow: true } : {}),
  };
}

/** The step's hook from the recipe kept for the run, the request's namespaces, the step's phase. */
async function readHookStep(options: {
  run: BackupRun;
  step: RecipeStepRef;
  deps: RunRecipeHookDeps;
}): Promise<{
  hook: Recipe['hooks'][number];
  namespaces: BackupPlan['namespaces'];
  phase: HookPhase;
}> {
  const { run, step, deps } = options;
  const recipe = await readRecipe({
    run,
    store: deps.store,
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  const hook = recipe.hooks.find((h) => h.name === step.name);
  if (!hook) throw new LifeboatError(`the recipe of backup ${run.name} has no hook ${step.name}`);
  const request = backupRequest.parse(await readWorkData({ run, key: backupWorkKeys(run).request, deps }));
  const { namespaces } = toBackupPlan(request);
  const phase = recipeStepPhase(recipe.workflows.backup ?? [], step.index);
  return { hook, namespaces, phase };
}

/** Pods the hook skips are warnings; no pod to run on, with onError Fail, is the step's error. */
function noteTargetProblems(options: {
  targets: RecipeHookTargets;
  steplog: StepLog;
  fields: { backup: string; hook: string };
  now: () => string;
}): void {
  const { targets, steplog, now } = options;
  const { backup, hook } = options.fields;
  for (const warning of targets.warnings) {
    steplog.log.push({ time: now(), level: 'warning', msg: warning, fields: { backup } });
    steplog.results = mergeResults(steplog.results, {
      errors: {},
      warnings: resultOf({ scope: 'velero', message: warning }),
    });
  }
  if (targets.failure) {
    steplog.log.push({ time: now(), level: 'error', msg: targets.failure, fields: { backup, hook } });
    steplog.results = mergeResults(steplog.results, {
      errors: resultOf({ scope: 'velero', message: targets.failure }),
      warnings: {},
    });
  }
}

/** The hook's commands in each target pod: the pods at once, each pod's commands in order. */
async function execHooks(options: {
  targets: RecipeHookTargets;
  run: BackupRun;
  deps: RunRecipeHookDeps;
}): Promise<PodHooksOutcome[]> {
  const { targets, deps } = options;
  const podExec = targets.pods.length > 0 ? await deps.podExecFor(options.run.cluster) : undefined;
  return Promise.all(
    targets.pods.map(({ pod, hooks }) =>
      runPodHooks({
        pod,
        hooks,
        exec: (h) =>
          (podExec as PodExec).exec({
            namespace: pod.namespace,
            pod: pod.name,
            container: h.container,
            command: h.command,
            timeoutMs: h.timeoutMs,
            ...(deps.signal ? { signal: deps.signal } : {}),
          }),
      }),
    ),
  );
}

/** Each hook run's lines in the log; a failed run is an error of its pod's namespace. */
function noteRuns(options: {
  runs: readonly HookRun[];
  steplog: StepLog;
  backup: string;
  now: () => string;
}): void {
  const { steplog, backup, now } = options;
  for (const r of options.runs) {
    steplog.log.push(
      ...hookRunEvents(r, now()).map((e) => ({ ...e, fields: { backup, ...(e.fields ?? {}) } })),
    );
    if (r.status === 'failed')
      steplog.results = mergeResults(steplog.results, {
        errors: resultOf({
          scope: { namespace: r.namespace },
          message: `${hookLabel(r)} failed: ${r.failure ?? ''}`,
        }),
        warnings: {},
      });
  }
}
