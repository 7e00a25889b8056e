/**
 * Where a restored pod's post-restore exec hooks stand, decided afresh from the pod as the
 * cluster has it now and from what earlier steps recorded, so that running them can stop and
 * resume at any point (a Lambda invocation ends; the state machine waits and calls again).
 * Velero runs the same rules from a pod watch (internal/hook/wait_exec_hook_handler.go):
 * - a container's hooks run in order once it is running (ready, when one of them asks
 *   `waitForReady`); containers are independent of each other;
 * - a hook whose wait timeout passed before its container came up fails ("expired before
 *   executing"); the wait starts when the pod is created, and "came up" is when the container
 *   started (or became ready), so a hook looked at late is judged as Velero's watch would have
 *   judged it at the time. With onError Fail it is not run and stops the pod; with Continue it
 *   is still run once its container is up, its failure recorded first (Velero's hook tracker
 *   keeps that first record), as long as the pod's watch lasts — its longest wait timeout, or
 *   the restore's limit when a hook has none;
 * - a failed hook with onError Fail stops the pod: its remaining hooks fail as not executed
 *   (Velero cancels the pod's watch and records them so);
 * - a pod deleted, or Succeeded/Failed, before its hooks ran fails them as not executed;
 * - a hook without a wait timeout waits as long as the restore allows for hooks.
 * Every failure counts in `hooksFailed` and is a restore error, whatever onError says (Velero's
 * hook tracker, 1.13+). Pure: reads objects and times given to it.
 */
import { formatDuration } from '../kubernetes/duration.js';
import { ANNOTATION_HOOK_NAME } from './annotations.js';
import type { CommandResult } from './plan.js';
import {
  type ContainerHooks,
  containerHookState,
  hookWaitExpired,
  longestHookWaitMs,
  type PodRestoreExecHook,
} from './restore.js';

/** One hook of a pod, by its container and position there. */
export interface HookSlot {
  readonly container: string;
  readonly index: number;
  readonly hook: PodRestoreExecHook;
}

export type HookFailureKind = 'execution' | 'expired' | 'notExecuted';

export interface HookSettlement {
  readonly slot: HookSlot;
  readonly failure: { readonly kind: HookFailureKind; readonly message: string };
}

export type NextHookAction =
  /**
   * Run this hook now. `expired`: its wait timeout had passed (onError Continue): it has failed
   * so, and runs all the same.
   */
  | {
      readonly kind: 'run';
      readonly slot: HookSlot;
      readonly expired?: { readonly kind: 'expired'; readonly message: string };
    }
  /** These hooks fail without running. */
  | { readonly kind: 'settle'; readonly settlements: readonly HookSettlement[] }
  /** Nothing can happen until a container comes up (or a wait runs out). */
  | { readonly kind: 'wait' }
  /** Every hook of the pod is settled. */
  | { readonly kind: 'done' };

export const slotKey = (slot: Pick<HookSlot, 'container' | 'index'>): string =>
  `${slot.container}/${slot.index}`;

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/** How Velero names a hook in its messages: `hook <name> in container <c> in pod <ns>/<pod>`. */
export function hookDescription(options: { slot: HookSlot; namespace: string; pod: string }): string {
  const { slot } = options;
  const name = slot.hook.hookName === ANNOTATION_HOOK_NAME ? 'from annotation' : slot.hook.hookName;
  return `hook ${name} in container ${slot.container} in pod ${options.namespace}/${options.pod}`;
}

/** When the pod was created (the hooks' wait starts then), in epoch milliseconds. */
export function podCreatedMs(pod: unknown): number | undefined {
  const created = Date.parse(String(record(record(pod).metadata).creationTimestamp ?? ''));
  return Number.isNaN(created) ? undefined : created;
}

/**
 * When the container came up as its hooks need it: started running, or, when a hook asks
 * `waitForReady`, the later of that and the pod's ContainersReady transition. Undefined when the
 * status does not say.
 */
export function containerUpSinceMs(options: { pod: unknown; container: ContainerHooks }): number | undefined {
  const status = record(record(options.pod).status);
  const statuses = Array.isArray(status.containerStatuses) ? status.containerStatuses.map(record) : [];
  const own = statuses.find((s) => s.name === options.container.container);
  const started = Date.parse(String(record(record(own?.state).running).startedAt ?? ''));
  if (Number.isNaN(started)) return undefined;
  if (!options.container.hooks.some((h) => h.waitForReady)) return started;
  const conditions = Array.isArray(status.conditions) ? status.conditions.map(record) : [];
  const ready = conditions.find((c) => c.type === 'ContainersReady' && c.status === 'True');
  const readySince = Date.parse(String(ready?.lastTransitionTime ?? ''));
  return Number.isNaN(readySince) ? started : Math.max(started, readySince);
}

function unsettledSlots(options: {
  byContainer: readonly ContainerHooks[];
  settled: ReadonlySet<string>;
}): HookSlot[][] {
  return options.byContainer.map((group) =>
    group.hooks
      .map((hook, index) => ({ container: group.container, index, hook }))
      .filter((slot) => !options.settled.has(slotKey(slot))),
  );
}

/** Where a pod's hooks stand: what `nextHookAction` decides from. */
export interface PodHookProgress {
  readonly namespace: string;
  readonly name: string;
  readonly byContainer: readonly ContainerHooks[];
  /** `slotKey`s of the hooks already run or failed. */
  readonly settled: ReadonlySet<string>;
  /** A hook failed with onError Fail. */
  readonly stopped: boolean;
  /** The pod as the cluster has it now; undefined when it no longer exists. */
  readonly pod: unknown;
  readonly nowMs: number;
  /** When the pod was created; the hooks' waits count from then. */
  readonly waitStartMs: number;
  /** How long a hook without a wait timeout waits (the restore's limit for hooks). */
  readonly restoreWaitLimitMs: number;
}

/** The pod's progress, with how its hooks are named in messages. */
interface HookContext {
  readonly progress: PodHookProgress;
  readonly describe: (slot: HookSlot) => string;
}

/**
 * The next thing to do for a pod's hooks. Call again after doing it (with the settled set
 * updated) until it answers `wait` or `done`.
 */
export function nextHookAction(options: PodHookProgress): NextHookAction {
  const groups = unsettledSlots(options).filter((slots) => slots.length > 0);
  if (groups.length === 0) return { kind: 'done' };
  const describe = (slot: HookSlot): string =>
    hookDescription({ slot, namespace: options.namespace, pod: options.name });
  const why = whyNoHookRuns(options);
  if (why !== undefined) {
    return {
      kind: 'settle',
      settlements: groups.flat().map((slot) => ({
        slot,
        failure: { kind: 'notExecuted', message: `${describe(slot)} not executed: ${why}` },
      })),
    };
  }
  const context: HookContext = { progress: options, describe };
  for (const slots of groups) {
    const action = containerAction(context, slots);
    if (action) return action;
  }
  return { kind: 'wait' };
}

/** Why none of the pod's remaining hooks can run any more (stopped, or the pod gone or ended). */
function whyNoHookRuns(progress: PodHookProgress): string | undefined {
  if (progress.stopped) return 'an earlier hook of the pod failed with onError Fail';
  if (progress.pod === undefined) return 'the pod was deleted before its hooks ran';
  const phase = record(record(progress.pod).status).phase;
  if (phase === 'Succeeded' || phase === 'Failed')
    return `the pod entered phase ${phase} before its hooks ran`;
  return undefined;
}

/** A container's first unsettled hook: run it, settle it, or undefined while it waits. */
function containerAction(context: HookContext, slots: readonly HookSlot[]): NextHookAction | undefined {
  const { progress, describe } = context;
  const first = slots[0];
  if (!first) return undefined;
  const group = progress.byContainer.find((g) => g.container === first.container);
  if (!group) return undefined;
  const state = containerHookState({ pod: progress.pod, container: group });
  const upMs = state === 'up' ? containerUpSinceMs({ pod: progress.pod, container: group }) : undefined;
  const waitedMs = (upMs ?? progress.nowMs) - progress.waitStartMs;
  const wanted = group.hooks.some((h) => h.waitForReady) ? 'ready' : 'running';
  const up = state === 'up' ? wanted : undefined;
  if (hookWaitExpired(first.hook, waitedMs)) {
    const limit = formatDuration(first.hook.waitTimeoutMs ?? 0);
    const why = up
      ? `its container became ${up} only after its wait timeout (${limit})`
      : `its container was not ${wanted} within its wait timeout (${limit})`;
    return expiredAction(context, {
      slot: first,
      up: up !== undefined,
      failure: { kind: 'expired', message: `${describe(first)} expired before executing: ${why}` },
    });
  }
  if (up) return { kind: 'run', slot: first };
  if (first.hook.waitTimeoutMs === undefined && waitedMs > progress.restoreWaitLimitMs) {
    return {
      kind: 'settle',
      settlements: slots.map((slot) => ({
        slot,
        failure: {
          kind: 'notExecuted',
          message: `${describe(slot)} not executed: its container was not up within the restore's limit for hooks (${formatDuration(progress.restoreWaitLimitMs)})`,
        },
      })),
    };
  }
  return undefined;
}

/** A hook whose wait timeout passed: settled as expired, or (onError Continue) still run once up. */
function expiredAction(
  context: HookContext,
  expired: { slot: HookSlot; up: boolean; failure: { kind: 'expired'; message: string } },
): NextHookAction | undefined {
  const { progress } = context;
  const { slot, failure } = expired;
  // Velero (wait_exec_hook_handler.go): with onError Continue the expired hook is recorded
  // failed and executed all the same; its container may still come up while the pod is watched.
  if (slot.hook.onError !== 'Fail') {
    if (expired.up) return { kind: 'run', slot, expired: failure };
    const watchMs = longestHookWaitMs(progress.byContainer) ?? progress.restoreWaitLimitMs;
    if (progress.nowMs - progress.waitStartMs <= watchMs) return undefined;
  }
  return { kind: 'settle', settlements: [{ slot, failure }] };
}

/** Why a hook that ran failed, or undefined when it succeeded (exit code 0 within its timeout). */
export function executionFailure(options: {
  result: CommandResult;
  slot: HookSlot;
  timeoutMs: number;
}): string | undefined {
  const { result } = options;
  if (result.timedOut) return `timed out after ${formatDuration(options.timeoutMs)}`;
  if (result.exitCode === 0) return undefined;
  if (result.exitCode !== undefined) return `command terminated with exit code ${result.exitCode}`;
  return result.error ?? 'the command ended without an exit code';
}
