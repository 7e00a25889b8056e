/**
 * RestoreHooks: runs the post-restore exec hooks of the pods this restore created, once their
 * containers are running (or ready), as Velero's restore does before it finishes
 * (wait_exec_hook_handler.go, restore_finalizer_controller.go WaitRestoreExecHook).
 *
 * Re-entrant, because a hook may wait for its container longer than one Lambda invocation
 * lives: each invocation picks up the pods whose hooks are not all settled (one working-data key
 * per pod), does what is ready, keeps looking for a while (`pollMs`), saves progress and returns
 * how many pods still wait; the state machine then waits `waitSeconds` and calls again. A hook
 * starts only if its exec timeout ends within the invocation's time (`maxRunMs`).
 *
 * Never fails the restore for a hook: failures are recorded for FinalizeRestore.
 */
import { gunzipSync } from 'node:zlib';
import pLimit from 'p-limit';
import { restoreRequest } from '../../shared/contracts/restore-request.js';
import {
  podHooksOutcome,
  podHooksRecord,
  type RestoreHooksProgress,
  type RestoreRun,
} from '../../shared/contracts/restore-run.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import { parseDuration } from '../../shared/domain/kubernetes/duration.js';
import { restoreWorkKeys } from '../../shared/domain/storage/keys.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ClusterWriter } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { PodExec } from '../../shared/ports/pod-exec.js';
import { podOfKey } from './pod-hook-records.js';
import {
  advancePodHooks,
  freshState,
  invocationBudget,
  type PodHooksContext,
  type PodHooksState,
} from './pod-hooks.js';

export interface RestoreHooksDeps {
  readonly store: ObjectStore;
  readonly cluster: ClusterWriter;
  readonly podExec?: PodExec;
  readonly clock: Clock;
  /** How long one invocation keeps looking for containers to come up (60 s). */
  readonly pollMs?: number;
  /** Between looks (1 s). */
  readonly pollIntervalMs?: number;
  /** The time one invocation may take, hooks included (14 min: Lambda stops at 15). */
  readonly maxRunMs?: number;
  /** What the state machine waits between invocations while hooks wait (10 s). */
  readonly waitSeconds?: number;
  /** Pods worked on at once (8). */
  readonly concurrency?: number;
  readonly signal?: AbortSignal;
}

/** Velero's default `itemOperationTimeout`: the longest a hook without a wait timeout waits here. */
export const DEFAULT_HOOK_WAIT_LIMIT_MS = 4 * 3_600_000;

const DONE_SUFFIX = '.json.gz';

async function readJson(store: ObjectStore, key: string, gzipped: boolean): Promise<unknown> {
  const raw = await store.get(key);
  if (!raw) return undefined;
  return JSON.parse((gzipped ? gunzipSync(raw) : Buffer.from(raw)).toString('utf8'));
}

/** The pods with hooks and those already settled, as `<namespace>/<name>`. */
async function podsWithHooks(
  store: ObjectStore,
  run: RestoreRun,
): Promise<{ all: string[]; done: Set<string> }> {
  const work = restoreWorkKeys(run);
  const [pods, done] = await Promise.all([store.list(work.podHooksDir), store.list(work.podHooksDoneDir)]);
  return {
    all: pods.flatMap((key) => podOfKey({ key, dir: work.podHooksDir, suffix: '.json' }) ?? []),
    done: new Set(
      done.flatMap((key) => podOfKey({ key, dir: work.podHooksDoneDir, suffix: DONE_SUFFIX }) ?? []),
    ),
  };
}

async function loadState(options: {
  store: ObjectStore;
  run: RestoreRun;
  id: string;
  clock: Clock;
}): Promise<PodHooksState> {
  const work = restoreWorkKeys(options.run);
  const [namespace = '', name = ''] = options.id.split('/');
  const stored = await readJson(options.store, work.podHooks(namespace, name), false);
  if (stored === undefined)
    throw new LifeboatError(`the hooks record of pod ${options.id} is missing from the working data`);
  const record = podHooksRecord.parse(stored);
  const progress = await readJson(options.store, work.podHooksProgress(namespace, name), true);
  return progress
    ? { record, outcome: podHooksOutcome.parse(progress), done: false }
    : freshState(record, options);
}

export async function restoreHooks(
  input: { run: RestoreRun },
  deps: RestoreHooksDeps,
): Promise<RestoreHooksProgress> {
  const { run } = input;
  const budget = invocationBudget(deps.maxRunMs ?? 14 * 60_000);
  const { elapsed } = budget;
  const pollMs = deps.pollMs ?? 60_000;
  const pollIntervalMs = deps.pollIntervalMs ?? 1_000;
  const pods = await podsWithHooks(deps.store, run);
  const pendingIds = pods.all.filter((id) => !pods.done.has(id));
  if (pendingIds.length === 0) return { pending: 0, waitSeconds: 0, settled: pods.done.size };

  const raw = await deps.store.get(restoreWorkKeys(run).request);
  if (!raw) throw new LifeboatError(`the request of restore ${run.name} is missing from the working data`);
  const { itemOperationTimeout } = restoreRequest.parse(JSON.parse(Buffer.from(raw).toString('utf8'))).restore
    .spec;
  const limitFromSpec = itemOperationTimeout === undefined ? undefined : parseDuration(itemOperationTimeout);
  const load = pLimit(16);
  const states = await Promise.all(
    pendingIds.map((id) => load(() => loadState({ store: deps.store, run, id, clock: deps.clock }))),
  );

  const ctx: PodHooksContext = {
    run,
    store: deps.store,
    cluster: deps.cluster,
    ...(deps.podExec ? { podExec: deps.podExec } : {}),
    clock: deps.clock,
    restoreWaitLimitMs: limitFromSpec && limitFromSpec > 0 ? limitFromSpec : DEFAULT_HOOK_WAIT_LIMIT_MS,
    maxExecMs: budget.maxExecMs,
    canStart: budget.canStart,
    ...(deps.signal ? { signal: deps.signal } : {}),
  };
  const limit = pLimit(deps.concurrency ?? 8);
  for (;;) {
    await Promise.all(states.filter((s) => !s.done).map((s) => limit(() => advancePodHooks(s, ctx))));
    const waiting = states.filter((s) => !s.done).length;
    if (waiting === 0 || budget.outOfTime() || elapsed() + pollIntervalMs > pollMs) break;
    await new Promise((resolve) => setTimeout(resolve, pollIntervalMs));
    if (deps.signal?.aborted) break;
  }
  const pending = states.filter((s) => !s.done).length;
  return {
    pending,
    // Out of time with hooks ready to run: the next invocation starts them at once.
    waitSeconds: pending === 0 || budget.outOfTime() ? 0 : (deps.waitSeconds ?? 10),
    settled: pods.done.size + states.filter((s) => s.done).length,
  };
}
