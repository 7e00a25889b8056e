/**
 * The exec hooks around one ItemBlock, as the worker (and the hook runner, for a block whose
 * hooks may outlast a Lambda) runs them: plan from the block's pods (annotations first, else the
 * backup's `spec.hooks.resources[]`), pre hooks of every pod, then — once the items are written —
 * post hooks of the pods whose pre hooks did not fail. Velero 1.15+ pkg/backup/backup.go
 * `backupItemBlock`. Hooks of one block run one after another, pod by pod, as in Velero.
 *
 * Each hook's stdout and stderr go into the backup log (hookRunEvents); a failed hook is an
 * error of the pod's namespace whatever its onError (Velero: the backup ends PartiallyFailed);
 * a Fail pre hook also takes the pod (and the PVCs only it mounts) out of the backup.
 * Only pod objects are parsed; never logs a command's output anywhere but the backup log.
 */
import type { BlockItem } from '../../shared/contracts/backup-run.js';
import type { HookPhase } from '../../shared/domain/hooks/annotations.js';
import { type BackupHookSpec, hookPodOf, type PodExecHook } from '../../shared/domain/hooks/backup.js';
import {
  type BlockHookPlan,
  type HookRun,
  hookLabel,
  hookRunEvents,
  type PlannedPodHooks,
  planBlockHooks,
  runPodHooks,
} from '../../shared/domain/hooks/plan.js';
import type { LogEvent } from '../../shared/domain/storage/log.js';
import { emptyResults, mergeResults, type Results, resultOf } from '../../shared/domain/storage/results.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { PodExec } from '../../shared/ports/pod-exec.js';

const isPodItem = (item: BlockItem): boolean => item.ref.group === '' && item.ref.resource === 'pods';

/** Whether a block holds a pod at all: only then are hooks (and the request's hook specs) needed. */
export function blockHasPods(items: readonly BlockItem[]): boolean {
  return items.some(isPodItem);
}

/** The hooks that run around a block, and the longest they may take together. */
export function planHooksOfBlock(options: {
  items: readonly BlockItem[];
  specs: readonly BackupHookSpec[];
}): { plan: BlockHookPlan; worstCaseMs: number } {
  const pods = options.items.filter(isPodItem).map((item) => hookPodOf(JSON.parse(item.json)));
  const plan = planBlockHooks({ items: options.items.map((i) => i.ref), pods, specs: options.specs });
  // A hook that cannot run (no such container) takes no time; every other may run to its timeout.
  const worstCaseMs = plan.pods
    .flatMap((p) => [...p.pre, ...p.post])
    .filter((h) => !h.invalid)
    .reduce((sum, h) => sum + h.timeoutMs, 0);
  return { plan, worstCaseMs };
}

export interface HookPhaseOutcome {
  readonly runs: readonly HookRun[];
  /** Pods with a pre hook that failed with onError Fail: not backed up, no post hooks. */
  readonly failedPods: readonly { namespace: string; name: string }[];
  readonly log: readonly LogEvent[];
  readonly results: Results;
}

/** Runs one phase's hooks of the planned pods, pod after pod. */
export async function runHookPhase(options: {
  pods: readonly PlannedPodHooks[];
  phase: HookPhase;
  podExec: PodExec;
  clock: Clock;
  backup: string;
  signal?: AbortSignal;
}): Promise<HookPhaseOutcome> {
  const runs: HookRun[] = [];
  const failedPods: { namespace: string; name: string }[] = [];
  const log: LogEvent[] = [];
  let results = emptyResults;
  for (const planned of options.pods) {
    const { pod } = planned;
    const hooks = options.phase === 'pre' ? planned.pre : planned.post;
    if (hooks.length === 0) continue;
    const outcome = await runPodHooks({
      pod,
      hooks,
      exec: (hook: PodExecHook) =>
        options.podExec.exec({
          namespace: pod.namespace,
          pod: pod.name,
          container: hook.container,
          command: hook.command,
          timeoutMs: hook.timeoutMs,
          ...(options.signal ? { signal: options.signal } : {}),
        }),
    });
    const time = options.clock.now().toISOString();
    for (const run of outcome.runs) {
      runs.push(run);
      log.push(...hookRunEvents(run, time).map((e) => withBackup(e, options.backup)));
      if (run.status === 'failed') {
        results = mergeResults(results, {
          errors: resultOf({
            scope: { namespace: run.namespace },
            message: `${hookLabel(run)} failed: ${run.failure ?? 'unknown failure'}`,
          }),
          warnings: {},
        });
      }
    }
    if (outcome.failed && options.phase === 'pre')
      failedPods.push({ namespace: pod.namespace, name: pod.name });
  }
  return { runs, failedPods, log, results };
}

/** The plan's warnings (pods not Running, annotation values ignored) as log lines and results. */
export function planWarnings(options: { plan: BlockHookPlan; clock: Clock; backup: string }): {
  log: LogEvent[];
  results: Results;
} {
  const time = options.clock.now().toISOString();
  const log: LogEvent[] = [];
  let results = emptyResults;
  for (const warning of options.plan.warnings) {
    log.push({ time, level: 'warning', msg: warning, fields: { backup: options.backup } });
    results = mergeResults(results, {
      errors: {},
      warnings: resultOf({ scope: 'velero', message: warning }),
    });
  }
  return { log, results };
}

function withBackup(event: LogEvent, backup: string): LogEvent {
  return { ...event, fields: { backup, ...(event.fields ?? {}) } };
}
