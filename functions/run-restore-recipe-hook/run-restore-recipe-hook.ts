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
import * as z from 'zod';
import type { RecipeHook } from '../../shared/contracts/recipe.js';
import { type RestoreSpec, restoreRequest } from '../../shared/contracts/restore-request.js';
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
import { restoreRecipeHookPods } from '../../shared/domain/recipes/restore-hooks.js';
import { restoreWorkKeys } from '../../shared/domain/storage/keys.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { Cluster, ClusterWriter } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { PodExec } from '../../shared/ports/pod-exec.js';
import { readStoredRecipe } from '../common/recipe-reference.js';
import {
  advancePodHooks,
  type InvocationBudget,
  invocationBudget,
  type PodHooksContext,
  type PodHooksState,
} from '../restore-hooks/pod-hooks.js';
import { DEFAULT_HOOK_WAIT_LIMIT_MS } from '../restore-hooks/restore-hooks.js';
import { listPods } from '../run-recipe-hook/run-recipe-hook.js';
import { recordStepPods } from './step-pods.js';

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
  const work = restoreWorkKeys(input.run);
  const earlier = await readJson(deps.store, work.recipeHookResult(input.step.index));
  if (earlier) return verdict(restoreRecipeHookResult.parse(earlier));
  const step = await loadHookStep(input, deps);
  const waiting = await awaitHookPods(step);
  if (waiting) return waiting;
  return runHookInPods(step);
}

/** One invocation of a recipe hook step: its hook, the state it saves, and how it spends its time. */
interface HookStepCall {
  readonly input: RestoreRecipeHookInput;
  readonly deps: RunRestoreRecipeHookDeps;
  readonly work: ReturnType<typeof restoreWorkKeys>;
  readonly hook: RecipeHook;
  readonly spec: RestoreSpec;
  readonly state: RestoreRecipeHookState;
  /** When the step first ran: the hook's waits count from it. */
  readonly startedMs: number;
  readonly fields: { readonly restore: string; readonly step: number; readonly hook: string };
  readonly budget: InvocationBudget;
  readonly pollMs: number;
  readonly pollIntervalMs: number;
  readonly signal: { readonly signal?: AbortSignal };
}

/** Reads the step's hook, the restore's spec and the step's saved state (or starts it). */
async function loadHookStep(
  input: RestoreRecipeHookInput,
  deps: RunRestoreRecipeHookDeps,
): Promise<HookStepCall> {
  const { run, step } = input;
  const work = restoreWorkKeys(run);
  const budget = invocationBudget(deps.maxRunMs ?? 14 * 60_000);
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
  const fields = { restore: run.name, step: step.index, hook: hook.name };
  const stored = await readJson(deps.store, work.recipeHookStep(step.index));
  const state: RestoreRecipeHookState = stored
    ? restoreRecipeHookState.parse(stored)
    : {
        startedAt: deps.clock.now().toISOString(),
        log: [
          { time: deps.clock.now().toISOString(), level: 'info', msg: 'Recipe hook step started', fields },
        ],
      };
  return {
    input,
    deps,
    work,
    hook,
    spec,
    state,
    startedMs: Date.parse(state.startedAt),
    fields,
    budget,
    pollMs: deps.pollMs ?? 60_000,
    pollIntervalMs: deps.pollIntervalMs ?? 1_000,
    signal,
  };
}

function saveState(step: HookStepCall): Promise<void> {
  return step.deps.store.put(step.work.recipeHookStep(step.input.step.index), JSON.stringify(step.state), {
    contentType: 'application/json',
    ...step.signal,
  });
}

/** Writes the step's result (FinalizeRestore reports it) and says what it means for the workflow. */
async function writeResult(
  step: HookStepCall,
  result: RestoreRecipeHookResult,
): Promise<RestoreRecipeHookProgress> {
  await step.deps.store.put(step.work.recipeHookResult(step.input.step.index), gz(result), {
    contentType: 'application/gzip',
    ...step.signal,
  });
  return verdict(result);
}

const sleep = (ms: number): Promise<unknown> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Which pods: those the hook selects once one exists, or none once its wait is over. Returns the
 * step's progress when it ends or must wait here; undefined once the pods are known.
 */
async function awaitHookPods(step: HookStepCall): Promise<RestoreRecipeHookProgress | undefined> {
  const { deps, hook, spec, state } = step;
  const namespaces = { includes: spec.includedNamespaces ?? [], excludes: spec.excludedNamespaces ?? [] };
  const namespaceMapping = spec.namespaceMapping ?? {};
  const restoredInto = z
    .array(z.string())
    .parse((await readJson(deps.store, step.work.recipeNamespaces)) ?? []);
  while (!state.pods) {
    // Listed namespace by namespace: never the whole cluster's pods.
    const pods =
      restoredInto.length === 0
        ? []
        : await listPods({ cluster: deps.cluster, namespaces: { includes: restoredInto }, ...step.signal });
    const selected = restoreRecipeHookPods({ hook, pods: pods, namespaces, namespaceMapping });
    if (selected.length > 0) {
      await recordStepPods({
        selected,
        hook,
        state,
        store: deps.store,
        clock: deps.clock,
        run: step.input.run,
        step: step.input.step.index,
        fields: step.fields,
        ...step.signal,
      });
      await saveState(step);
      break;
    }
    if (deps.clock.now().getTime() - step.startedMs > hook.waitTimeoutMs)
      return writeResult(step, noPodResult(step));
    if (step.budget.elapsed() + step.pollIntervalMs > step.pollMs || deps.signal?.aborted) {
      await saveState(step);
      return { done: false, waitSeconds: deps.waitSeconds ?? 10, attempted: 0, failed: 0 };
    }
    await sleep(step.pollIntervalMs);
  }
  return undefined;
}

/** The step's result when its wait for pods is over and the hook selects none. */
function noPodResult(step: HookStepCall): RestoreRecipeHookResult {
  const { hook } = step;
  const message = `recipe hook ${hook.name} selects no pod in the restored namespaces`;
  const fails = hook.onError === 'Fail';
  return {
    step: step.input.step.index,
    hook: hook.name,
    log: [
      ...step.state.log,
      {
        time: step.deps.clock.now().toISOString(),
        level: fails ? 'error' : 'warning',
        msg: message,
        fields: step.fields,
      },
    ],
    pods: [],
    errors: fails ? [{ message }] : [],
    warnings: fails ? [] : [message],
    stopsWorkflow: fails,
  };
}

/** Each pod's commands, once its container runs (the restore exec hooks' rules). */
async function runHookInPods(step: HookStepCall): Promise<RestoreRecipeHookProgress> {
  const { deps, budget } = step;
  const ctx = podHooksContext(step);
  const states = await readPodStates(step);
  for (;;) {
    for (const s of states.filter((p) => !p.done)) await advancePodHooks(s, ctx);
    if (
      states.every((s) => s.done) ||
      budget.outOfTime() ||
      budget.elapsed() + step.pollIntervalMs > step.pollMs ||
      deps.signal?.aborted
    )
      break;
    await sleep(step.pollIntervalMs);
  }
  if (!states.every((s) => s.done))
    return {
      done: false,
      waitSeconds: budget.outOfTime() ? 0 : (deps.waitSeconds ?? 10),
      attempted: 0,
      failed: 0,
    };
  return writeResult(step, settledResult(step, states));
}

/** The restore exec hooks' machinery, under the step's own keys and its own start. */
function podHooksContext(step: HookStepCall): PodHooksContext {
  const { deps, spec, work, budget } = step;
  const index = step.input.step.index;
  const itemOperationMs = spec.itemOperationTimeout ? parseDuration(spec.itemOperationTimeout) : undefined;
  return {
    run: step.input.run,
    store: deps.store,
    cluster: deps.cluster,
    ...(deps.podExec ? { podExec: deps.podExec } : {}),
    clock: deps.clock,
    restoreWaitLimitMs: itemOperationMs && itemOperationMs > 0 ? itemOperationMs : DEFAULT_HOOK_WAIT_LIMIT_MS,
    maxExecMs: budget.maxExecMs,
    canStart: budget.canStart,
    keys: {
      progress: (ns, name) => work.recipeHookPodProgress(index, ns, name),
      done: (ns, name) => work.recipeHookPodDone(index, ns, name),
    },
    waitsFromMs: step.startedMs,
    ...step.signal,
  };
}

/** Each pod's hooks as earlier invocations left them. */
async function readPodStates(step: HookStepCall): Promise<PodHooksState[]> {
  const { store } = step.deps;
  const index = step.input.step.index;
  const states: PodHooksState[] = [];
  for (const record of step.state.pods ?? []) {
    const done = await readJson(store, step.work.recipeHookPodDone(index, record.namespace, record.name));
    const progress =
      done ?? (await readJson(store, step.work.recipeHookPodProgress(index, record.namespace, record.name)));
    const outcome: PodHooksOutcome = progress
      ? podHooksOutcome.parse(progress)
      : { namespace: record.namespace, name: record.name, runs: [], stopped: false, log: [] };
    states.push({ record, outcome, done: done !== undefined });
  }
  return states;
}

/** The step's result once every pod's hooks settled; it stops the workflow when a Fail hook failed. */
function settledResult(step: HookStepCall, states: readonly PodHooksState[]): RestoreRecipeHookResult {
  const { hook } = step;
  const pods = states.map((s) => s.outcome);
  const failed = pods.some((p) => p.runs.some((r) => r.status === 'failed'));
  const stops = failed && hook.onError === 'Fail';
  const end = stops
    ? [
        {
          time: step.deps.clock.now().toISOString(),
          level: 'info' as const,
          msg: 'Recipe workflow stops: a hook with onError Fail failed',
          fields: step.fields,
        },
      ]
    : [];
  return {
    step: step.input.step.index,
    hook: hook.name,
    log: [...step.state.log, ...end],
    pods,
    errors: [],
    warnings: [],
    stopsWorkflow: stops,
  };
}
