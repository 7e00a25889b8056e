/**
 * One restored pod's post-restore exec hooks, advanced as far as they can go now: reads the pod,
 * runs every hook whose container is up (through PodExec, with its exec timeout), fails those
 * whose wait ran out, and saves progress after each step so that a later invocation resumes
 * where this one stopped. The rules are shared/domain/restore-hook-progress's. A command that
 * ran and failed, or that the apiserver refused, is the hook's failure; only an abort or a
 * retryable apiserver error ends the step (after progress is saved).
 */
import { gzipSync } from 'node:zlib';
import type { PodHooksOutcome, PodHooksRecord, RestoreRun } from '../../shared/contracts/restore-run.js';
import { RetryableError } from '../../shared/domain/errors.js';
import { hookRunEvents } from '../../shared/domain/hooks/plan.js';
import {
  executionFailure,
  type HookSettlement,
  type HookSlot,
  hookDescription,
  nextHookAction,
  podCreatedMs,
  slotKey,
} from '../../shared/domain/hooks/restore-progress.js';
import { formatDuration } from '../../shared/domain/kubernetes/duration.js';
import { restoreWorkKeys } from '../../shared/domain/storage/keys.js';
import type { LogEvent } from '../../shared/domain/storage/log.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ClusterWriter } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { PodExec, PodExecResult } from '../../shared/ports/pod-exec.js';

export interface PodHooksContext {
  readonly run: RestoreRun;
  readonly store: ObjectStore;
  readonly cluster: ClusterWriter;
  /** Undefined: no exec access (a local run without a kubeconfig cluster); hooks fail so. */
  readonly podExec?: PodExec;
  readonly clock: Clock;
  readonly restoreWaitLimitMs: number;
  /** The longest exec timeout one invocation allows; longer ones are cut to it, with a warning. */
  readonly maxExecMs: number;
  /** Whether a hook with this exec timeout can still start in this invocation. */
  readonly canStart: (timeoutMs: number) => boolean;
  /**
   * Where the pod's progress and outcome are kept (the restore's pod hook keys unless set): a
   * recipe hook step keeps its own, beside any hooks of the same pod.
   */
  readonly keys?: {
    readonly progress: (namespace: string, name: string) => string;
    readonly done: (namespace: string, name: string) => string;
  };
  /** The waits count from the pod's creation, or from this time when later (a recipe hook step's start). */
  readonly waitsFromMs?: number;
  readonly signal?: AbortSignal;
}

/**
 * One invocation's time for pod hooks: a hook starts only if its exec timeout ends before the
 * invocation must return (`maxRunMs`); once one could not, the invocation stops polling and
 * comes back at once for more time.
 */
export interface InvocationBudget {
  readonly elapsed: () => number;
  readonly maxExecMs: number;
  readonly canStart: (timeoutMs: number) => boolean;
  readonly outOfTime: () => boolean;
}

export function invocationBudget(maxRunMs: number): InvocationBudget {
  const begun = performance.now();
  const elapsed = (): number => performance.now() - begun;
  let outOfTime = false;
  return {
    elapsed,
    maxExecMs: Math.floor(maxRunMs * 0.9),
    canStart: (timeoutMs) => {
      const fits = elapsed() + timeoutMs <= maxRunMs;
      if (!fits) outOfTime = true;
      return fits;
    },
    outOfTime: () => outOfTime,
  };
}

/** The fields of a restore exec hook's log line, as Velero's restore log names them. */
function hookLogFields(options: {
  ctx: PodHooksContext;
  state: PodHooksState;
  slot: HookSlot;
}): Record<string, string> {
  const { ctx, state, slot } = options;
  return {
    restore: ctx.run.name,
    resource: 'pods',
    namespace: state.record.namespace,
    name: state.record.name,
    hookName: slot.hook.hookName,
    hookSource: slot.hook.source,
    hookType: 'exec',
    hookPhase: 'post',
    hookContainer: slot.container,
  };
}

/** A pod's hooks while an invocation works on them. */
export interface PodHooksState {
  readonly record: PodHooksRecord;
  outcome: PodHooksOutcome;
  done: boolean;
}

export function freshState(
  record: PodHooksRecord,
  ctx: Pick<PodHooksContext, 'clock' | 'run'>,
): PodHooksState {
  const time = ctx.clock.now().toISOString();
  return {
    record,
    done: false,
    outcome: {
      namespace: record.namespace,
      name: record.name,
      runs: [],
      stopped: false,
      // Velero logs ignored hook annotations and dropped hooks as warnings.
      log: record.warnings.map((msg) => ({
        time,
        level: 'warning' as const,
        msg,
        fields: { restore: ctx.run.name, resource: 'pods', namespace: record.namespace, name: record.name },
      })),
    },
  };
}

const gz = (value: unknown): Buffer => gzipSync(JSON.stringify(value));

function withRestoreFields(events: readonly LogEvent[], run: RestoreRun): LogEvent[] {
  return events.map((e) => ({ ...e, fields: { ...e.fields, restore: run.name, resource: 'pods' } }));
}

/** Advances the pod's hooks; returns when they are all settled, must wait, or are out of time. */
export async function advancePodHooks(
  state: PodHooksState,
  ctx: PodHooksContext,
): Promise<'done' | 'waiting'> {
  const { namespace, name } = state.record;
  const work = restoreWorkKeys(ctx.run);
  const keys = ctx.keys ?? { progress: work.podHooksProgress, done: work.podHooksDone };
  const signal = ctx.signal ? { signal: ctx.signal } : {};
  const { pod, waitStartMs } = await readPod(state, ctx);
  const progress = podProgress({ state, ctx, key: keys.progress(namespace, name) });
  for (;;) {
    const action = nextHookAction({
      namespace,
      name,
      byContainer: state.record.execHooks,
      settled: new Set(state.outcome.runs.map((r) => slotKey({ container: r.container, index: r.index }))),
      stopped: state.outcome.stopped,
      pod,
      nowMs: ctx.clock.now().getTime(),
      waitStartMs,
      restoreWaitLimitMs: ctx.restoreWaitLimitMs,
    });
    if (action.kind === 'done') {
      await ctx.store.put(keys.done(namespace, name), gz(state.outcome), {
        contentType: 'application/gzip',
        ...signal,
      });
      state.done = true;
      return 'done';
    }
    if (action.kind === 'wait') {
      await progress.save();
      return 'waiting';
    }
    if (action.kind === 'settle') {
      settleHooks({ state, ctx, settlements: action.settlements });
      progress.changed();
      await progress.save();
      continue;
    }
    const timeoutMs = Math.min(action.slot.hook.timeoutMs, ctx.maxExecMs);
    if (!ctx.canStart(timeoutMs)) {
      await progress.save();
      return 'waiting';
    }
    await runHook({
      state,
      ctx,
      slot: action.slot,
      timeoutMs,
      ...(action.expired ? { expired: action.expired } : {}),
    });
    progress.changed();
    await progress.save();
  }
}

/** The pod as it is now, and when its hooks' waits began. */
async function readPod(
  state: PodHooksState,
  ctx: PodHooksContext,
): Promise<{ pod: Record<string, unknown> | undefined; waitStartMs: number }> {
  const { namespace, name } = state.record;
  const pod = await ctx.cluster.read({
    resource: 'pods',
    object: { apiVersion: 'v1', kind: 'Pod', metadata: { namespace, name } },
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
  const waitStartMs = Math.max(
    podCreatedMs(pod) ?? Date.parse(ctx.run.startedAt),
    ctx.waitsFromMs ?? Number.NEGATIVE_INFINITY,
  );
  return { pod, waitStartMs };
}

/** The pod's saved progress: written again only when this invocation changed it. */
function podProgress(options: { state: PodHooksState; ctx: PodHooksContext; key: string }): {
  readonly changed: () => void;
  readonly save: () => Promise<void>;
} {
  const { state, ctx, key } = options;
  // A fresh pod whose record had warnings has something to save before any hook settles.
  let changed = state.outcome.runs.length === 0 && state.outcome.log.length > 0;
  return {
    changed: () => {
      changed = true;
    },
    save: async () => {
      if (!changed) return;
      await ctx.store.put(key, gz(state.outcome), {
        contentType: 'application/gzip',
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      });
      changed = false;
    },
  };
}

/** Records hooks that failed without running (their wait ran out, or the pod can never run them). */
function settleHooks(options: {
  state: PodHooksState;
  ctx: PodHooksContext;
  settlements: readonly HookSettlement[];
}): void {
  const { state, ctx } = options;
  const time = ctx.clock.now().toISOString();
  for (const { slot, failure } of options.settlements) {
    state.outcome.runs.push({
      container: slot.container,
      index: slot.index,
      hookName: slot.hook.hookName,
      source: slot.hook.source,
      status: 'failed',
      failure,
    });
    state.outcome.log.push({
      time,
      level: 'error',
      msg: failure.message,
      fields: hookLogFields({ ctx, state, slot }),
    });
    // Velero: an expired hook with onError Fail cancels the pod's watch too.
    if (failure.kind === 'expired' && slot.hook.onError === 'Fail') state.outcome.stopped = true;
  }
}

/** One hook to run now, with the exec timeout this invocation gives it. */
interface HookRun {
  state: PodHooksState;
  ctx: PodHooksContext;
  slot: HookSlot;
  timeoutMs: number;
  /** Its wait timeout passed (onError Continue): failed so, and run all the same (Velero). */
  expired?: { readonly kind: 'expired'; readonly message: string };
}

async function runHook(options: HookRun): Promise<void> {
  const { state, ctx, slot, timeoutMs } = options;
  const { namespace, name } = state.record;
  const time = ctx.clock.now().toISOString();
  const describe = hookDescription({ slot, namespace, pod: name });
  if (timeoutMs < slot.hook.timeoutMs) {
    state.outcome.log.push({
      time,
      level: 'warning',
      msg: `${describe}: its exec timeout ${formatDuration(slot.hook.timeoutMs)} is longer than one step can wait; it runs with ${formatDuration(timeoutMs)}`,
      fields: { restore: ctx.run.name, resource: 'pods', namespace, name },
    });
  }
  const execution = await execHook(options);
  recordHookRun({ ...options, ...execution, time, describe });
}

/** How a hook's command went: its result when it ran, and why it failed when it did. */
interface HookExecution {
  result: PodExecResult | undefined;
  why: string | undefined;
}

/** Runs the hook's command in its container; a refused command is the hook's failure, not the step's. */
async function execHook(options: HookRun): Promise<HookExecution> {
  const { state, ctx, slot, timeoutMs } = options;
  if (!ctx.podExec)
    return { result: undefined, why: 'no access to run commands in pods was given to this restore' };
  let result: PodExecResult | undefined;
  let why: string | undefined;
  try {
    result = await ctx.podExec.exec({
      namespace: state.record.namespace,
      pod: state.record.name,
      container: slot.container,
      command: slot.hook.command,
      timeoutMs,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    why = executionFailure({ result, slot, timeoutMs });
  } catch (error) {
    // Nothing ran: the step is retried, resuming at this hook.
    if (error instanceof RetryableError || ctx.signal?.aborted) throw error;
    why = error instanceof Error ? error.message : String(error);
  }
  return { result, why };
}

/** Adds the hook's run and its log lines to the pod's outcome. */
function recordHookRun(options: HookRun & HookExecution & { time: string; describe: string }): void {
  const { state, ctx, slot, timeoutMs, expired, result, why, time } = options;
  const { namespace, name } = state.record;
  const failed = why !== undefined;
  // Velero's hook tracker keeps a hook's first record: an expired hook stays failed as expired.
  const failure =
    expired ??
    (failed ? { kind: 'execution' as const, message: `${options.describe} failed: ${why}` } : undefined);
  if (expired)
    state.outcome.log.push({
      time,
      level: 'error',
      msg: expired.message,
      fields: hookLogFields({ ctx, state, slot }),
    });
  state.outcome.runs.push({
    container: slot.container,
    index: slot.index,
    hookName: slot.hook.hookName,
    source: slot.hook.source,
    status: failure ? 'failed' : 'succeeded',
    ...(failure ? { failure } : {}),
    ...(result?.exitCode !== undefined ? { exitCode: result.exitCode } : {}),
    ...(result ? { durationMs: result.durationMs } : {}),
  });
  const events = hookRunEvents(
    {
      namespace,
      pod: name,
      hook: { ...slot.hook, timeoutMs },
      status: failed ? 'failed' : 'succeeded',
      ...(result ? { result } : {}),
      ...(why ? { failure: why } : {}),
    },
    time,
  );
  state.outcome.log.push(...withRestoreFields(events, ctx.run));
  if (failed && slot.hook.onError === 'Fail') state.outcome.stopped = true;
}
