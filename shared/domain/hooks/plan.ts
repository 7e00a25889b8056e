/**
 * Hooks around one ItemBlock, as Velero 1.15+ runs them (seed 000, pkg/backup/backup.go
 * `backupItemBlock`): pre hooks on every pod of the block → the block's items → post hooks on
 * the pods whose pre hooks did not fail. As data: the plan of which hooks run on which pod, the
 * items a failed pre hook takes out of the backup, the log lines and the hook counts.
 *
 * Beyond Velero: a pod whose pre hook failed with onError Fail is skipped (as in Velero) *and so
 * are the PVCs only skipped pods mount, with their PVs*: the hook was meant to make that data
 * consistent, so backing it up anyway would store what the hook was there to prevent (the
 * concern raised in the ItemBlock review, seed 000).
 *
 * Pure: `runPodHooks` takes the command runner as a function; nothing here does I/O.
 */

import type { ItemFacts } from '../backup/item-blocks.js';
import { formatDuration } from '../kubernetes/duration.js';
import { type ItemRef, itemIdentity } from '../kubernetes/item-ref.js';
import type { LogEvent } from '../storage/log.js';
import { ANNOTATION_HOOK_NAME, type HookPhase } from './annotations.js';
import {
  type BackupHookSpec,
  backupHooksForPod,
  type HookPod,
  type PodExecHook,
  podHookSkipReason,
} from './backup.js';

/** What running one command in a container gave (the PodExec port's result). */
export interface CommandResult {
  /** Undefined when the command has no exit code: it timed out, or the exec itself failed. */
  readonly exitCode?: number;
  /** The tail of each stream when it was longer than the runner keeps. */
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  readonly durationMs: number;
  /** Why there is no exit code (the apiserver's status message, a closed stream). */
  readonly error?: string;
}

export interface PlannedPodHooks {
  readonly ref: ItemRef;
  readonly pod: HookPod;
  readonly pre: readonly PodExecHook[];
  readonly post: readonly PodExecHook[];
}

export interface BlockHookPlan {
  /** Running pods of the block that have hooks, in block order. */
  readonly pods: readonly PlannedPodHooks[];
  /** Pods skipped because they are not Running, annotations ignored: one line each. */
  readonly warnings: readonly string[];
}

const isPod = (ref: ItemRef): boolean => ref.group === '' && ref.resource === 'pods';

/**
 * Which hooks run on which pod of a block. `pods` are the block's pod objects read by
 * `hookPodOf`; a pod item without one gets no hooks.
 */
export function planBlockHooks(options: {
  items: readonly ItemRef[];
  pods: readonly HookPod[];
  specs: readonly BackupHookSpec[];
}): BlockHookPlan {
  const byName = new Map(options.pods.map((p) => [`${p.namespace}/${p.name}`, p]));
  const planned: PlannedPodHooks[] = [];
  const warnings: string[] = [];
  const seen = new Set<string>();
  for (const ref of options.items) {
    const key = `${ref.namespace}/${ref.name}`;
    // One object under two versions is one pod: its hooks run once.
    if (!isPod(ref) || seen.has(key)) continue;
    seen.add(key);
    const pod = byName.get(key);
    if (!pod) continue;
    const pre = backupHooksForPod({ pod, phase: 'pre', specs: options.specs });
    const post = backupHooksForPod({ pod, phase: 'post', specs: options.specs });
    warnings.push(...pre.warnings, ...post.warnings);
    if (pre.hooks.length === 0 && post.hooks.length === 0) continue;
    const skip = podHookSkipReason(pod);
    if (skip) {
      warnings.push(skip);
      continue;
    }
    planned.push({ ref, pod, pre: pre.hooks, post: post.hooks });
  }
  return { pods: planned, warnings };
}

export interface HookRun {
  readonly namespace: string;
  readonly pod: string;
  readonly hook: PodExecHook;
  /**
   * `notRun`: an earlier hook of the same pod and phase failed with onError Fail. Velero counts
   * such hooks as attempted (they were collected) but neither executed nor failed.
   */
  readonly status: 'succeeded' | 'failed' | 'notRun';
  readonly result?: CommandResult;
  /** Why the hook failed, one phrase: `exit code 3`, `timed out after 30s`, the exec error. */
  readonly failure?: string;
}

export interface PodHooksOutcome {
  readonly runs: readonly HookRun[];
  /** A hook with onError Fail failed: after a pre hook, the pod is not backed up. */
  readonly failed: boolean;
}

function failureOf(result: CommandResult, hook: PodExecHook): string | undefined {
  if (result.timedOut) return `timed out after ${formatDuration(hook.timeoutMs)}`;
  if (result.exitCode === 0) return undefined;
  if (result.exitCode !== undefined) return `exit code ${result.exitCode}`;
  return result.error ?? 'the command ended without an exit code';
}

/** Errors that end the whole step rather than fail one hook: the run was aborted. */
function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');
}

/**
 * Runs one pod's hooks of a phase in order. Velero: a failed hook with onError Fail stops the
 * pod's remaining hooks for that phase; any other failure is logged and the next hook runs.
 * A hook that cannot run (`invalid`) fails without calling `exec`. An error thrown by `exec`
 * is that hook's failure, except an abort, which propagates.
 */
export async function runPodHooks(options: {
  pod: Pick<HookPod, 'namespace' | 'name'>;
  hooks: readonly PodExecHook[];
  exec: (hook: PodExecHook) => Promise<CommandResult>;
}): Promise<PodHooksOutcome> {
  const { namespace, name } = options.pod;
  const runs: HookRun[] = [];
  let failed = false;
  for (const hook of options.hooks) {
    if (failed) {
      runs.push({ namespace, pod: name, hook, status: 'notRun' });
      continue;
    }
    let run: HookRun;
    if (hook.invalid) {
      run = { namespace, pod: name, hook, status: 'failed', failure: hook.invalid };
    } else {
      try {
        const result = await options.exec(hook);
        const failure = failureOf(result, hook);
        run = failure
          ? { namespace, pod: name, hook, status: 'failed', result, failure }
          : { namespace, pod: name, hook, status: 'succeeded', result };
      } catch (error) {
        if (isAbort(error)) throw error;
        const failure = error instanceof Error ? error.message : String(error);
        run = { namespace, pod: name, hook, status: 'failed', failure };
      }
    }
    runs.push(run);
    if (run.status === 'failed' && hook.onError === 'Fail') failed = true;
  }
  return { runs, failed };
}

export interface SkippedItem {
  readonly ref: ItemRef;
  readonly reason: string;
}

/**
 * The block's items once its pre hooks have run: pods whose pre hook failed with onError Fail are
 * skipped (Velero marks them backed up), and so are PVCs that only skipped pods of the block
 * mount, and the PVs those PVCs are bound to. A PVC another pod of the block still mounts stays.
 */
export function itemsAfterPreHooks(options: {
  items: readonly ItemFacts[];
  failedPods: readonly Pick<HookPod, 'namespace' | 'name'>[];
}): { backUp: ItemRef[]; skipped: SkippedItem[] } {
  const failed = new Set(options.failedPods.map((p) => `${p.namespace}/${p.name}`));
  const pvcId = (namespace: string, name: string): string =>
    itemIdentity({ group: '', resource: 'persistentvolumeclaims', namespace, name });
  // For each PVC: the pods of the block that mount it, and whether one of them stays.
  const mountedBy = new Map<string, { failedPods: string[]; kept: boolean }>();
  for (const facts of options.items) {
    if (!isPod(facts.ref)) continue;
    const key = `${facts.ref.namespace}/${facts.ref.name}`;
    for (const claim of facts.claims ?? []) {
      const id = pvcId(facts.ref.namespace, claim);
      const entry = mountedBy.get(id) ?? { failedPods: [], kept: false };
      if (failed.has(key)) entry.failedPods.push(key);
      else entry.kept = true;
      mountedBy.set(id, entry);
    }
  }
  const skippedPv = new Map<string, string>();
  const skippedIds = new Map<string, string>();
  for (const facts of options.items) {
    const { ref } = facts;
    const id = itemIdentity(ref);
    if (isPod(ref) && failed.has(`${ref.namespace}/${ref.name}`)) {
      skippedIds.set(id, `a pre hook of pod ${ref.namespace}/${ref.name} failed with onError Fail`);
    } else if (ref.group === '' && ref.resource === 'persistentvolumeclaims') {
      const mount = mountedBy.get(id);
      if (mount && !mount.kept && mount.failedPods.length > 0) {
        const reason = `only pod ${mount.failedPods.join(', ')} mounts it, and its pre hook failed with onError Fail`;
        skippedIds.set(id, reason);
        if (facts.volumeName)
          skippedPv.set(facts.volumeName, `its PVC ${ref.namespace}/${ref.name} is skipped: ${reason}`);
      }
    }
  }
  const backUp: ItemRef[] = [];
  const skipped: SkippedItem[] = [];
  for (const { ref } of options.items) {
    const pvReason =
      ref.group === '' && ref.resource === 'persistentvolumes' ? skippedPv.get(ref.name) : undefined;
    const reason = skippedIds.get(itemIdentity(ref)) ?? pvReason;
    if (reason) skipped.push({ ref, reason });
    else backUp.push(ref);
  }
  return { backUp, skipped };
}

/** The pods whose post hooks run: Velero runs post hooks only where the pre hooks did not fail. */
export function postHookPods(options: {
  plan: BlockHookPlan;
  failedPods: readonly Pick<HookPod, 'namespace' | 'name'>[];
}): PlannedPodHooks[] {
  const failed = new Set(options.failedPods.map((p) => `${p.namespace}/${p.name}`));
  return options.plan.pods.filter(
    (p) => p.post.length > 0 && !failed.has(`${p.pod.namespace}/${p.pod.name}`),
  );
}

/** `status.hookStatus`: Velero counts every collected hook as attempted, and failed ones. */
export function hookStatusOf(runs: readonly HookRun[]): { hooksAttempted: number; hooksFailed: number } {
  return {
    hooksAttempted: runs.length,
    hooksFailed: runs.filter((r) => r.status === 'failed').length,
  };
}

/**
 * The backup log lines of one hook run, with Velero's fields (`hookName`, `hookContainer`,
 * `hookCommand`, `hookOnError`, `hookTimeout`, `hookSource`, `hookType`, `hookPhase`): "running
 * exec hook", its stdout and stderr, and an error line when it failed (any failure is an error
 * line, whatever onError says: Velero makes such a backup PartiallyFailed).
 */
export function hookRunEvents(run: HookRun, time: string): LogEvent[] {
  const { hook } = run;
  const fields = {
    namespace: run.namespace,
    name: run.pod,
    hookName: hook.hookName,
    hookSource: hook.source,
    hookType: 'exec',
    hookPhase: hook.phase,
    hookContainer: hook.container,
    hookCommand: JSON.stringify(hook.command),
    hookOnError: hook.onError,
    hookTimeout: formatDuration(hook.timeoutMs),
  };
  if (run.status === 'notRun') {
    return [
      {
        time,
        level: 'info',
        msg: 'hook not run: an earlier hook of this pod failed with onError Fail',
        fields,
      },
    ];
  }
  const events: LogEvent[] = [];
  if (!hook.invalid) events.push({ time, level: 'info', msg: 'running exec hook', fields });
  if (run.result) {
    events.push({ time, level: 'info', msg: `stdout: ${run.result.stdout}`, fields });
    events.push({ time, level: 'info', msg: `stderr: ${run.result.stderr}`, fields });
  }
  if (run.status === 'failed') {
    events.push({
      time,
      level: 'error',
      msg: 'Error executing hook',
      fields: { ...fields, error: run.failure ?? '' },
    });
  }
  return events;
}

/** The name a hook goes by in messages: the spec entry's, or where the annotation hook ran. */
export function hookLabel(run: Pick<HookRun, 'namespace' | 'pod' | 'hook'>): string {
  const name = run.hook.hookName === ANNOTATION_HOOK_NAME ? 'annotation hook' : `hook ${run.hook.hookName}`;
  const phase: HookPhase = run.hook.phase;
  return `${phase} ${name} in ${run.namespace}/${run.pod} container ${run.hook.container}`;
}
