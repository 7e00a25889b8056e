/**
 * Restore hooks for one pod (Velero internal/hook/item_hook_handler.go, wait_exec_hook_handler.go):
 * - init hooks: init containers put into the pod before it is created, as a pure transform;
 * - exec hooks: commands run once a container is running (or ready, with `waitForReady`),
 *   grouped by container, with the waits Velero allows.
 * Annotations take precedence over the spec's hooks for that pod. Spec hooks select pods by the
 * pod's namespace *in the target cluster* (Velero #4720) and labels; their resource lists are
 * ignored, as Velero builds restore hook selectors for `pods` only. Call these functions with the
 * pod as it will be created (namespace already mapped), or give `withRestoreInitHooks` the
 * target namespace.
 * Pure: never runs anything, never mutates the given pod.
 */

import type { FieldProblem } from '../errors.js';
import { parseDuration } from '../kubernetes/duration.js';
import {
  ANNOTATION_HOOK_NAME,
  type RestoreExecHookInput,
  restoreExecHookFromAnnotations,
  restoreInitHookFromAnnotations,
} from './annotations.js';
import {
  DEFAULT_EXEC_TIMEOUT_MS,
  DEFAULT_ON_ERROR,
  type HookPod,
  type HookSelectorSpec,
  hookPodOf,
  hookSelects,
  type PodExecHook,
  timeoutMsOf,
} from './backup.js';

/** A restore hook spec entry, shaped like `spec.hooks.resources[]` of a Restore. */
export interface RestoreHookSpec extends HookSelectorSpec {
  readonly postHooks?: readonly {
    readonly init?: {
      readonly initContainers?: readonly Readonly<Record<string, unknown>>[];
      readonly timeout?: string;
    };
    readonly exec?: RestoreExecHookInput;
  }[];
}

/**
 * Init containers Velero's own restore adds to wait for pod volume data; they stay first so that
 * hook init containers see the restored data. `restic-wait` is the pre-1.10 name.
 */
export const RESTORE_WAIT_CONTAINERS: readonly string[] = ['restore-wait', 'restic-wait'];

/** FNV-1a, 32 bits, as 8 hex digits: a stable suffix for generated names. */
function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

/**
 * Velero `ValidateContainer`: a spec init container needs `name`, `image` and a non-empty
 * `command`. Returns what is missing, or undefined.
 */
export function initContainerProblem(container: Readonly<Record<string, unknown>>): string | undefined {
  const missing: string[] = [];
  if (typeof container.name !== 'string' || container.name === '') missing.push('name');
  if (typeof container.image !== 'string' || container.image === '') missing.push('image');
  if (!Array.isArray(container.command) || container.command.length === 0) missing.push('command');
  return missing.length > 0 ? `an init container hook needs ${missing.join(', ')}` : undefined;
}

/**
 * Every spec init container that Velero's ValidateContainer would refuse, by field path, for a
 * restore's validation step (so that a bad hook fails the request up front, not pod by pod).
 */
export function restoreInitHookProblems(specs: readonly RestoreHookSpec[]): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const [i, spec] of specs.entries()) {
    for (const [j, hook] of (spec.postHooks ?? []).entries()) {
      for (const [k, container] of (hook.init?.initContainers ?? []).entries()) {
        const problem = initContainerProblem(container);
        if (problem)
          problems.push({
            path: `spec.hooks.resources[${i}].postHooks[${j}].init.initContainers[${k}]`,
            message: problem,
          });
      }
    }
  }
  return problems;
}

export type InitHookOutcome =
  | {
      readonly ok: true;
      readonly pod: Record<string, unknown>;
      /** Names of the init containers the hooks added, in order. */
      readonly added: readonly string[];
    }
  | { readonly ok: false; readonly error: string };

/**
 * The pod with its restore init hooks, in Velero's order: a leading restore-wait container
 * first, then the hook containers (the annotation's one, or every matching spec entry's in spec
 * order), then the pod's own init containers. Without hooks the pod is returned unchanged.
 * A generated container name is derived from the restore and pod, so a retried step produces
 * the same pod (Velero uses a random `velero-restore-init-<8 hex>`).
 */
export function withRestoreInitHooks(options: {
  pod: Readonly<Record<string, unknown>>;
  specs: readonly RestoreHookSpec[];
  restoreName: string;
  /**
   * The namespace the pod will be created in, when the pod still carries its backed-up one:
   * Velero's init-restore-hook action runs before the namespace is set, yet selects by the
   * mapped namespace (Velero #4720).
   */
  namespace?: string;
}): InitHookOutcome {
  const read = hookPodOf(options.pod);
  const facts = options.namespace === undefined ? read : { ...read, namespace: options.namespace };
  const hookContainers: Record<string, unknown>[] = [];
  const annotation = restoreInitHookFromAnnotations(facts.annotations).hook;
  if (annotation) {
    const name =
      annotation.name ??
      `velero-restore-init-${shortHash(`${options.restoreName}/${facts.namespace}/${facts.name}`)}`;
    hookContainers.push({
      name,
      image: annotation.image,
      ...(annotation.command ? { command: [...annotation.command] } : {}),
    });
  } else {
    for (const [i, spec] of options.specs.entries()) {
      if (!hookSelects({ spec, namespace: facts.namespace, labels: facts.labels, ignoreResources: true }))
        continue;
      for (const [j, hook] of (spec.postHooks ?? []).entries()) {
        for (const [k, container] of (hook.init?.initContainers ?? []).entries()) {
          const problem = initContainerProblem(container);
          if (problem) {
            return {
              ok: false,
              error: `spec.hooks.resources[${i}].postHooks[${j}].init.initContainers[${k}]: ${problem}`,
            };
          }
          hookContainers.push(structuredClone({ ...container }));
        }
      }
    }
  }
  if (hookContainers.length === 0) return { ok: true, pod: structuredClone({ ...options.pod }), added: [] };

  const pod = structuredClone({ ...options.pod });
  const spec = (typeof pod.spec === 'object' && pod.spec !== null ? pod.spec : {}) as Record<string, unknown>;
  const existing = Array.isArray(spec.initContainers)
    ? (spec.initContainers as Record<string, unknown>[])
    : [];
  const first = existing[0];
  const leadingWait =
    first !== undefined && typeof first.name === 'string' && RESTORE_WAIT_CONTAINERS.includes(first.name);
  spec.initContainers = leadingWait
    ? [first, ...hookContainers, ...existing.slice(1)]
    : [...hookContainers, ...existing];
  pod.spec = spec;
  return { ok: true, pod, added: hookContainers.map((c) => String(c.name)) };
}

/** A restore exec hook settled for a pod: the exec hook plus how long to wait for its container. */
export interface PodRestoreExecHook extends PodExecHook {
  /** Undefined: wait as long as the restore waits (Velero: a zero wait timeout waits indefinitely). */
  readonly waitTimeoutMs?: number;
  readonly waitForReady: boolean;
}

export interface ContainerHooks {
  readonly container: string;
  /** In the order they run, once the container is up. */
  readonly hooks: readonly PodRestoreExecHook[];
}

function settleRestoreHook(options: {
  pod: HookPod;
  input: RestoreExecHookInput;
  hookName: string;
  source: PodExecHook['source'];
}): PodRestoreExecHook {
  const { input } = options;
  const wait = input.waitTimeout === undefined ? undefined : parseDuration(input.waitTimeout);
  return {
    hookName: options.hookName,
    source: options.source,
    // Velero logs restore exec hooks with hookPhase "post".
    phase: 'post',
    // Velero: the first container when unset.
    container: input.container || (options.pod.containers[0] ?? ''),
    command: [...input.command],
    onError: input.onError ?? DEFAULT_ON_ERROR,
    timeoutMs: timeoutMsOf(input.execTimeout, DEFAULT_EXEC_TIMEOUT_MS),
    ...(wait !== undefined && wait > 0 ? { waitTimeoutMs: wait } : {}),
    waitForReady: input.waitForReady ?? false,
  };
}

/**
 * The exec hooks to run in a restored pod, by container (Velero `GroupRestoreExecHooks`). Hooks
 * naming a container the pod does not have are dropped with a warning, as Velero does, so that
 * the restore does not wait for a container that will never start.
 */
export function restoreExecHooksForPod(options: { pod: HookPod; specs: readonly RestoreHookSpec[] }): {
  byContainer: ContainerHooks[];
  warnings: string[];
} {
  const { pod } = options;
  if (pod.containers.length === 0) return { byContainer: [], warnings: [] };
  const fromAnnotation = restoreExecHookFromAnnotations(pod.annotations);
  const warnings = fromAnnotation.warnings.map((w) => `pod ${pod.namespace}/${pod.name}: ${w}`);
  const hooks: PodRestoreExecHook[] = [];
  if (fromAnnotation.hook) {
    hooks.push(
      settleRestoreHook({
        pod,
        input: fromAnnotation.hook,
        hookName: ANNOTATION_HOOK_NAME,
        source: 'annotation',
      }),
    );
  } else {
    for (const spec of options.specs) {
      if (!hookSelects({ spec, namespace: pod.namespace, labels: pod.labels, ignoreResources: true }))
        continue;
      for (const entry of spec.postHooks ?? []) {
        if (entry.exec)
          hooks.push(settleRestoreHook({ pod, input: entry.exec, hookName: spec.name, source: 'spec' }));
      }
    }
  }
  const grouped = new Map<string, PodRestoreExecHook[]>();
  for (const hook of hooks) {
    if (!pod.containers.includes(hook.container)) {
      warnings.push(
        `pod ${pod.namespace}/${pod.name} has no container "${hook.container}": its post-restore exec hook ${hook.hookName} is dropped`,
      );
      continue;
    }
    grouped.set(hook.container, [...(grouped.get(hook.container) ?? []), hook]);
  }
  const byContainer = [...grouped].map(([container, list]) => ({ container, hooks: list }));
  return { byContainer, warnings };
}

/**
 * Whether a container's hooks can run now: `up` once it is running (or ready, when a hook of it
 * asks `waitForReady`), `ended` once the pod has Succeeded or Failed (its hooks never run),
 * otherwise `waiting`. Velero: isContainerUp / the Succeeded-Failed check of the hook watcher.
 */
export function containerHookState(options: {
  pod: unknown;
  container: ContainerHooks;
}): 'up' | 'waiting' | 'ended' {
  const o = (typeof options.pod === 'object' && options.pod !== null ? options.pod : {}) as Record<
    string,
    unknown
  >;
  const status = (typeof o.status === 'object' && o.status !== null ? o.status : {}) as Record<
    string,
    unknown
  >;
  if (status.phase === 'Succeeded' || status.phase === 'Failed') return 'ended';
  const statuses = Array.isArray(status.containerStatuses)
    ? (status.containerStatuses as Record<string, unknown>[])
    : [];
  const own = statuses.find((s) => s.name === options.container.container);
  if (!own) return 'waiting';
  const state = (typeof own.state === 'object' && own.state !== null ? own.state : {}) as Record<
    string,
    unknown
  >;
  const running = typeof state.running === 'object' && state.running !== null;
  const needsReady = options.container.hooks.some((h) => h.waitForReady);
  return running && (!needsReady || own.ready === true) ? 'up' : 'waiting';
}

/** Velero: a hook whose wait timeout passed before its container came up is not run. */
export function hookWaitExpired(hook: PodRestoreExecHook, waitedMs: number): boolean {
  return hook.waitTimeoutMs !== undefined && waitedMs > hook.waitTimeoutMs;
}

/** How long to watch the pod: the longest wait timeout, or undefined (as long as the restore) if any hook has none. */
export function longestHookWaitMs(groups: readonly ContainerHooks[]): number | undefined {
  let longest = 0;
  for (const group of groups) {
    for (const hook of group.hooks) {
      if (hook.waitTimeoutMs === undefined) return undefined;
      longest = Math.max(longest, hook.waitTimeoutMs);
    }
  }
  return longest;
}
