/**
 * RunRestoreRecipeHook: one hook step of a recipe's restore workflow (docs/recipes.md). Finds the
 * pods the hook selects in the namespaces the restore restores into, as PlanRestore listed them
 * (waiting, up to the hook's waitTimeout,
 * for one to exist: pods of workloads restored by the step before come up after it), then runs
 * the hook's commands in each, in order, once its container runs — with the machinery of the
 * restore's exec hooks (functions/restore-hooks/pod-hooks.ts), under keys of the step's own.
 *
 * Re-entrant, as RestoreHooks: an invocation does what it can within its time, saves progress
 * and returns `done: false` with the seconds to wait; the state machine calls again. Once every
 * pod's hooks are settled, the step's result is written (FinalizeRestore reports it) and, when a
 * hook with onError Fail failed, RecipeStepFailed is thrown: the workflow stops there. A step
 * with a result is not run again. Never fails the restore for a hook.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { z } from 'zod';
import { restoreRequest } from '../../shared/contracts/restore-request.js';
import {
  type PodHooksOutcome,
  podHooksOutcome,
  type RestoreRecipeHookInput,
  type RestoreRecipeHookProgress,
  type RestoreRecipeHookResult,
  type RestoreRecipeHookState,
  restoreRecipeHookResult,
  restoreRecipeHookState,
} from '../../shared/contracts/restore-run.js';
import { LifeboatError, RecipeStepFailed } from '../../shared/domain/errors.js';
import { parseDuration } from '../../shared/domain/kubernetes/duration.js';
import { restoreRecipeExecHooks, restoreRecipeHookPods } from '../../shared/domain/recipes/restore-hooks.js';
import { restoreWorkKeys } from '../../shared/domain/storage/keys.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { Cluster, ClusterWriter } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { PodExec } from '../../shared/ports/pod-exec.js';
import { readStoredRecipe } from '../common/recipe-reference.js';
import {
  advancePodHooks,
  invocationBudget,
  type PodHooksContext,
  type PodHooksState,
} from '../restore-hooks/pod-hooks.js';
import { DEFAULT_HOOK_WAIT_LIMIT_MS } from '../restore-hooks/restore-hooks.js';
import { listPods } from '../run-recipe-hook/run-recipe-hook.js';

export interface RunRestoreRecipeHookDeps {
  readonly store: ObjectStore;
  readonly cluster: ClusterWriter & Pick<Cluster, 'listPage'>;
  /** Undefined: no exec access; the hooks fail saying so. */
  readonly podExec?: PodExec;
  readonly clock: Clock;
  /** How long one invocation keeps looking for pods and containers (60 s), and between looks (1 s). */
  readonly pollMs?: number;
  readonly pollIntervalMs?: number;
  /** The time one invocation may take, commands included (14 min: Lambda stops at 15). */
  readonly maxRunMs?: number;
  /** What the state machine waits between invocations while the step waits (10 s). */
  readonly waitSeconds?: number;
  readonly signal?: AbortSignal;
}

const gz = (value: unknown): Buffer => gzipSync(JSON.stringify(value));

async function readJson(store: ObjectStore, key: string): Promise<unknown> {
  const raw = await store.get(key);
  if (!raw) return undefined;
  return JSON.parse((key.endsWith('.gz') ? gunzipSync(raw) : Buffer.from(raw)).toString('utf8'));
}

function verdict(result: RestoreRecipeHookResult): RestoreRecipeHookProgress {
  if (result.stopsWorkflow)
    throw new RecipeStepFailed(
      `recipe hook ${result.hook} (step ${result.step}) failed with onError Fail: the workflow stops here`,
    );
  const runs = result.pods.flatMap((p) => p.runs);
  return {
    done: true,
    waitSeconds: 0,
    attempted: runs.length,
    failed: runs.filter((r) => r.status === 'failed').length,
  };
}

export async function runRestoreRecipeHook(
  input: RestoreRecipeHookInput,
  deps: RunRestoreRecipeHookDeps,
): Promise<RestoreRecipeHookProgress> {
  const { run, step } = input;
  const work = restoreWorkKeys(run);
  const earlier = await readJson(deps.store, work.recipeHookResult(step.index));
  if (earlier) return verdict(restoreRecipeHookResult.parse(earlier));
  const budget = invocationBudget(deps.maxRunMs ?? 14 * 60_000);
  const { elapsed } = budget;
  const pollMs = deps.pollMs ?? 60_000;
  const pollIntervalMs = deps.pollIntervalMs ?? 1_000;
  const signal = deps.signal ? { signal: deps.signal } : {};

  const recipe = await readStoredRecipe({
    store: deps.store,
    key: work.recipe,
    of: `restore ${run.name}`,
    ...signal,
  });
  const hook = recipe.hooks.find((h) => h.name === step.name);
  if (!hook) throw new LifeboatError(`the recipe of restore ${run.name} has no hook ${step.name}`);
  const spec = restoreRequest.parse(await readJson(deps.store, work.request)).restore.spec;
  const namespaces = { includes: spec.includedNamespaces ?? [], excludes: spec.excludedNamespaces ?? [] };
  const mapping = spec.namespaceMapping ?? {};
  const now = () => deps.clock.now();
  const fields = { restore: run.name, step: step.index, hook: hook.name };
  const stored = await readJson(deps.store, work.recipeHookStep(step.index));
  const state: RestoreRecipeHookState = stored
    ? restoreRecipeHookState.parse(stored)
    : {
        startedAt: now().toISOString(),
        log: [{ time: now().toISOString(), level: 'info', msg: 'Recipe hook step started', fields }],
      };
  const startedMs = Date.parse(state.startedAt);
  const saveState = () =>
    deps.store.put(work.recipeHookStep(step.index), JSON.stringify(state), {
      contentType: 'application/json',
      ...signal,
    });
  const writeResult = async (result: RestoreRecipeHookResult): Promise<RestoreRecipeHookProgress> => {
    await deps.store.put(work.recipeHookResult(step.index), gz(result), {
      contentType: 'application/gzip',
      ...signal,
    });
    return verdict(result);
  };

  // Which pods: those the hook selects once one exists, or none once its wait is over.
  const restoredInto = z.array(z.string()).parse((await readJson(deps.store, work.recipeNamespaces)) ?? []);
  while (!state.pods) {
    // Listed namespace by namespace: never the whole cluster's pods.
    const pods =
      restoredInto.length === 0
        ? []
        : await listPods({ cluster: deps.cluster, namespaces: { includes: restoredInto }, ...signal });
    const selected = restoreRecipeHookPods({ hook, pods: pods, namespaces, namespaceMapping: mapping });
    if (selected.length > 0) {
      state.pods = [];
      for (const pod of selected) {
        const hooks = restoreRecipeExecHooks(pod, hook);
        state.pods.push({
          namespace: pod.namespace,
          name: pod.name,
          execHooks: hooks.invalid
            ? []
            : [
                {
                  container: hooks.container,
                  hooks: hooks.hooks.map((h) => ({ ...h, command: [...h.command] })),
                },
              ],
          warnings: [],
        });
        // A container that does not exist: each command fails unrun (an error, as at backup).
        if (hooks.invalid) await failUnrun({ pod, hooks, deps, run, step: step.index, ...signal });
      }
      state.log.push({
        time: now().toISOString(),
        level: 'info',
        msg: 'Recipe hook step runs in pods',
        fields: { ...fields, pods: selected.map((p) => `${p.namespace}/${p.name}`).join(',') },
      });
      await saveState();
      break;
    }
    if (now().getTime() - startedMs > hook.waitTimeoutMs) {
      const message = `recipe hook ${hook.name} selects no pod in the restored namespaces`;
      const fails = hook.onError === 'Fail';
      return writeResult({
        step: step.index,
        hook: hook.name,
        log: [
          ...state.log,
          { time: now().toISOString(), level: fails ? 'error' : 'warning', msg: message, fields },
        ],
        pods: [],
        errors: fails ? [{ message }] : [],
        warnings: fails ? [] : [message],
        stopsWorkflow: fails,
      });
    }
    if (elapsed() + pollIntervalMs > pollMs || deps.signal?.aborted) {
      await saveState();
      return { done: false, waitSeconds: deps.waitSeconds ?? 10, attempted: 0, failed: 0 };
    }
    await new Promise((resolve) => setTimeout(resolve, pollIntervalMs));
  }

  // Each pod's commands, once its container runs (the restore exec hooks' rules).
  const itemOperationMs = spec.itemOperationTimeout ? parseDuration(spec.itemOperationTimeout) : undefined;
  const ctx: PodHooksContext = {
    run,
    store: deps.store,
    cluster: deps.cluster,
    ...(deps.podExec ? { podExec: deps.podExec } : {}),
    clock: deps.clock,
    restoreWaitLimitMs: itemOperationMs && itemOperationMs > 0 ? itemOperationMs : DEFAULT_HOOK_WAIT_LIMIT_MS,
    maxExecMs: budget.maxExecMs,
    canStart: budget.canStart,
    keys: {
      progress: (ns, name) => work.recipeHookPodProgress(step.index, ns, name),
      done: (ns, name) => work.recipeHookPodDone(step.index, ns, name),
    },
    waitsFromMs: startedMs,
    ...signal,
  };
  const states: PodHooksState[] = [];
  for (const record of state.pods) {
    const done = await readJson(
      deps.store,
      work.recipeHookPodDone(step.index, record.namespace, record.name),
    );
    const progress =
      done ??
      (await readJson(deps.store, work.recipeHookPodProgress(step.index, record.namespace, record.name)));
    const outcome: PodHooksOutcome = progress
      ? podHooksOutcome.parse(progress)
      : { namespace: record.namespace, name: record.name, runs: [], stopped: false, log: [] };
    states.push({ record, outcome, done: done !== undefined });
  }
  for (;;) {
    for (const s of states.filter((p) => !p.done)) await advancePodHooks(s, ctx);
    if (
      states.every((s) => s.done) ||
      budget.outOfTime() ||
      elapsed() + pollIntervalMs > pollMs ||
      deps.signal?.aborted
    )
      break;
    await new Promise((resolve) => setTimeout(resolve, pollIntervalMs));
  }
  if (!states.every((s) => s.done))
    return {
      done: false,
      waitSeconds: budget.outOfTime() ? 0 : (deps.waitSeconds ?? 10),
      attempted: 0,
      failed: 0,
    };
  const pods = states.map((s) => s.outcome);
  const failed = pods.some((p) => p.runs.some((r) => r.status === 'failed'));
  const stops = failed && hook.onError === 'Fail';
  const end = stops
    ? [
        {
          time: now().toISOString(),
          level: 'info' as const,
          msg: 'Recipe workflow stops: a hook with onError Fail failed',
          fields,
        },
      ]
    : [];
  return writeResult({
    step: step.index,
    hook: hook.name,
    log: [...state.log, ...end],
    pods,
    errors: [],
    warnings: [],
    stopsWorkflow: stops,
  });
}

/** Records each command of a pod whose hook container does not exist as failed, not run. */
async function failUnrun(options: {
  pod: { namespace: string; name: string };
  hooks: ReturnType<typeof restoreRecipeExecHooks>;
  deps: RunRestoreRecipeHookDeps;
  run: RestoreRecipeHookInput['run'];
  step: number;
  signal?: AbortSignal;
}): Promise<void> {
  const { pod, hooks, deps, run } = options;
  const time = deps.clock.now().toISOString();
  const message = `recipe hook ${hooks.hooks[0]?.hookName ?? ''} in pod ${pod.namespace}/${pod.name} not executed: ${hooks.invalid ?? ''}`;
  const outcome: PodHooksOutcome = {
    namespace: pod.namespace,
    name: pod.name,
    runs: hooks.hooks.map((h, index) => ({
      container: hooks.container,
      index,
      hookName: h.hookName,
      source: 'recipe' as const,
      status: 'failed' as const,
      failure: { kind: 'notExecuted' as const, message },
    })),
    stopped: hooks.hooks[0]?.onError === 'Fail',
    log: [
      {
        time,
        level: 'error',
        msg: message,
        fields: { restore: run.name, resource: 'pods', namespace: pod.namespace, name: pod.name },
      },
    ],
  };
  await deps.store.put(
    restoreWorkKeys(run).recipeHookPodProgress(options.step, pod.namespace, pod.name),
    gz(outcome),
    {
      contentType: 'application/gzip',
      ...(options.signal ? { signal: options.signal } : {}),
    },
  );
}
