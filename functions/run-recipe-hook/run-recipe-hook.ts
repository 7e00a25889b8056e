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
import type { RecipeStepRef } from '../../shared/contracts/recipe-run.js';
import { LifeboatError, RecipeStepFailed } from '../../shared/domain/errors.js';
import { type HookPod, hookPodOf } from '../../shared/domain/hooks/backup.js';
import {
  type HookRun,
  hookLabel,
  hookRunEvents,
  hookStatusOf,
  runPodHooks,
} from '../../shared/domain/hooks/plan.js';
import type { ApiResource } from '../../shared/domain/kubernetes/api-resources.js';
import { includesEverything } from '../../shared/domain/kubernetes/includes-excludes.js';
import { recipeHookTargets, recipeStepPhase } from '../../shared/domain/recipes/hooks.js';
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
  const read = async (key: string): Promise<unknown> => {
    const raw = await deps.store.get(key, { signal: deps.signal });
    if (!raw) throw new LifeboatError(`${key} of backup ${run.name} is missing from the working data`);
    return JSON.parse(Buffer.from(raw).toString('utf8'));
  };
  const { attempt } = collectedSummary.parse(await read(work.collected));
  const resultId = `${recipeStepMessagePrefix(attempt, step.index)}hook`;
  const resultKey = work.messageResult(resultId);
  const verdict = (result: MessageResult) => {
    if (result.stopsWorkflow)
      throw new RecipeStepFailed(
        `recipe hook ${step.name} (step ${step.index}) failed with onError Fail: the workflow stops here`,
      );
    return { hooks: result.hooks ?? { attempted: 0, failed: 0 } };
  };
  const earlier = await earlierResult(deps.store, resultKey, deps.signal);
  if (earlier) return verdict(earlier);

  const recipe = await readRecipe({
    run,
    store: deps.store,
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  const hook = recipe.hooks.find((h) => h.name === step.name);
  if (!hook) throw new LifeboatError(`the recipe of backup ${run.name} has no hook ${step.name}`);
  const request = backupRequest.parse(await read(work.request));
  const { namespaces } = toBackupPlan(request);
  const phase = recipeStepPhase(recipe.workflows.backup ?? [], step.index);
  const now = () => deps.clock.now().toISOString();
  const log: LogEvent[] = [
    {
      time: now(),
      level: 'info',
      msg: 'Recipe hook step started',
      fields: { backup: run.name, step: step.index, hook: hook.name },
    },
  ];
  let results: Results = emptyResults;
  const pods = await listPods({
    cluster: deps.cluster,
    namespaces,
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  const targets = recipeHookTargets({ hook, pods, namespaces, phase });
  for (const warning of targets.warnings) {
    log.push({ time: now(), level: 'warning', msg: warning, fields: { backup: run.name } });
    results = mergeResults(results, {
      errors: {},
      warnings: resultOf({ scope: 'velero', message: warning }),
    });
  }
  let stops = false;
  if (targets.failure) {
    stops = true;
    log.push({
      time: now(),
      level: 'error',
      msg: targets.failure,
      fields: { backup: run.name, hook: hook.name },
    });
    results = mergeResults(results, {
      errors: resultOf({ scope: 'velero', message: targets.failure }),
      warnings: {},
    });
  }
  const podExec = targets.pods.length > 0 ? await deps.podExecFor(run.cluster) : undefined;
  const outcomes = await Promise.all(
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
  const runs: HookRun[] = outcomes.flatMap((o) => o.runs);
  for (const r of runs) {
    log.push(
      ...hookRunEvents(r, now()).map((e) => ({ ...e, fields: { backup: run.name, ...(e.fields ?? {}) } })),
    );
    if (r.status === 'failed')
      results = mergeResults(results, {
        errors: resultOf({
          scope: { namespace: r.namespace },
          message: `${hookLabel(r)} failed: ${r.failure ?? ''}`,
        }),
        warnings: {},
      });
  }
  if (outcomes.some((o) => o.failed)) stops = true;
  if (stops)
    log.push({
      time: now(),
      level: 'info',
      msg: 'Recipe workflow stops: a hook with onError Fail failed',
      fields: { backup: run.name, step: step.index, hook: hook.name },
    });
  const counts = hookStatusOf(runs);
  const { text: logText, levels: logLevels } = logTextOf(log);
  const result: MessageResult = {
    messageId: resultId,
    items: [],
    fragmentKey: null,
    ...results,
    logText,
    logLevels,
    hooks: { attempted: counts.hooksAttempted, failed: counts.hooksFailed },
    ...(stops ? { stopsWorkflow: true } : {}),
  };
  await deps.store.put(resultKey, await gzip(JSON.stringify(result)), { contentType: 'application/gzip' });
  return verdict(result);
}
