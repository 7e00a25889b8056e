/**
 * Backup exec hooks for one pod: which hooks apply (pod annotations first, else the spec's
 * `hooks.resources[]` by namespace, resource and label selector), and the defaults that make
 * each one runnable (container, timeout, onError). Velero: internal/hook/item_hook_handler.go and
 * pkg/podexec/pod_command_executor.go.
 *
 * Decisions where Velero is unclear:
 * - `onError` unset acts as Continue. Velero's docs say the default is Fail
 *   (site/content/docs/v1.17/backup-hooks.md), but its handlers stop only when the hook's own
 *   value is Fail: the executor defaults a copy of the hook, so an unset value logs an error and
 *   goes on. We match the behaviour Velero users see, so a backup spec keeps its meaning here; the
 *   failure still counts in `hooksFailed` and makes the backup PartiallyFailed.
 * - A pod that is not Running gets no hooks, with a warning; its objects are still backed up.
 *   Velero skips Succeeded/Failed pods silently and lets exec fail on Pending ones.
 *
 * Pure: reads pod objects as the apiserver returns them; never runs anything.
 */

import { parseDuration } from '../kubernetes/duration.js';
import { type IncludesExcludes, shouldInclude } from '../kubernetes/includes-excludes.js';
import { type LabelSelector, selectorMatches } from '../kubernetes/label-selector.js';
import {
  ANNOTATION_HOOK_NAME,
  backupHookFromAnnotations,
  type ExecHookInput,
  type HookErrorMode,
  type HookPhase,
} from './annotations.js';

/** Lifeboat's value for an unset `onError` (see the module comment). */
export const DEFAULT_ON_ERROR: HookErrorMode = 'Continue';
/** Velero podexec `defaultTimeout`. */
export const DEFAULT_EXEC_TIMEOUT_MS = 30_000;

/** What hook selection needs to know of a pod, read by `hookPodOf`. */
export interface HookPod {
  readonly namespace: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  /** `status.phase`; undefined when the object has no status. */
  readonly phase?: string;
  /** `spec.containers[].name`, in order: the first is the default hook container. */
  readonly containers: readonly string[];
  /** Restartable init containers (`restartPolicy: Always`): Velero runs hooks in these too. */
  readonly sidecars: readonly string[];
  /** Names of the PVCs its volumes claim. */
  readonly claims: readonly string[];
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function stringMap(value: unknown): Record<string, string> {
  return Object.fromEntries(Object.entries(record(value)).filter(([, v]) => typeof v === 'string')) as Record<
    string,
    string
  >;
}

function list(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.map(record) : [];
}

/** Reads a pod object into the facts hook selection uses. */
export function hookPodOf(object: unknown): HookPod {
  const o = record(object);
  const metadata = record(o.metadata);
  const spec = record(o.spec);
  const status = record(o.status);
  const names = (containers: Record<string, unknown>[]): string[] =>
    containers.map((c) => c.name).filter((n): n is string => typeof n === 'string');
  return {
    namespace: typeof metadata.namespace === 'string' ? metadata.namespace : '',
    name: typeof metadata.name === 'string' ? metadata.name : '',
    labels: stringMap(metadata.labels),
    annotations: stringMap(metadata.annotations),
    ...(typeof status.phase === 'string' ? { phase: status.phase } : {}),
    containers: names(list(spec.containers)),
    sidecars: names(list(spec.initContainers).filter((c) => c.restartPolicy === 'Always')),
    claims: list(spec.volumes)
      .map((v) => record(v.persistentVolumeClaim).claimName)
      .filter((c): c is string => typeof c === 'string'),
  };
}

/** Which pods a spec hook applies to (Velero ResourceHookSelector), shared by backup and restore. */
export interface HookSelectorSpec {
  readonly name: string;
  readonly includedNamespaces?: readonly string[];
  readonly excludedNamespaces?: readonly string[];
  readonly includedResources?: readonly string[];
  readonly excludedResources?: readonly string[];
  readonly labelSelector?: LabelSelector | null;
}

/** A backup hook spec entry, shaped like `spec.hooks.resources[]` of a Backup. */
export interface BackupHookSpec extends HookSelectorSpec {
  readonly pre?: readonly { readonly exec: ExecHookInput }[];
  readonly post?: readonly { readonly exec: ExecHookInput }[];
}

const POD_NAMES = new Set(['pods', 'pod', 'po', 'pods.', 'pod.', 'po.']);

/**
 * A user-written resource name as Velero's discovery would resolve it, for the one resource
 * hooks act on: `pod`, `po`, `Pod` name `pods`; any other name (or glob) is kept as written.
 */
export function podResourceName(name: string): string {
  return POD_NAMES.has(name.toLowerCase()) ? 'pods' : name;
}

/** Velero `applicableTo`: namespace, resource (always `pods` here) and label selector all match. */
export function hookSelects(options: {
  spec: HookSelectorSpec;
  namespace: string;
  labels: Readonly<Record<string, string>>;
  /** Restore hooks ignore the resource lists: Velero builds their selector with `pods` only. */
  ignoreResources?: boolean;
}): boolean {
  const { spec } = options;
  const namespaces: IncludesExcludes = {
    includes: spec.includedNamespaces ?? [],
    excludes: spec.excludedNamespaces ?? [],
  };
  if (!shouldInclude(namespaces, options.namespace)) return false;
  if (!options.ignoreResources) {
    const resources: IncludesExcludes = {
      includes: (spec.includedResources ?? []).map(podResourceName),
      excludes: (spec.excludedResources ?? []).map(podResourceName),
    };
    if (!shouldInclude(resources, 'pods')) return false;
  }
  return !spec.labelSelector || selectorMatches(spec.labelSelector, options.labels);
}

/** One exec hook, settled for one pod: what runs where, and what a failure means. */
export interface PodExecHook {
  /** The spec entry's or recipe hook's name, or `<from-annotation>`. */
  readonly hookName: string;
  readonly source: 'annotation' | 'spec' | 'recipe';
  readonly phase: HookPhase;
  readonly container: string;
  readonly command: readonly string[];
  readonly onError: HookErrorMode;
  readonly timeoutMs: number;
  /**
   * Why the hook cannot run in this pod (a named container that does not exist, a pod without
   * containers). Velero counts such a hook as attempted and failed, and honours its onError.
   */
  readonly invalid?: string;
}

/** Velero `ensureContainerExists` / `setDefaultHookContainer`: the container, or why there is none. */
export function hookContainer(
  pod: HookPod,
  container: string | undefined,
): { container: string; invalid?: string } {
  if (!container) {
    const first = pod.containers[0];
    return first === undefined
      ? { container: '', invalid: `pod ${pod.namespace}/${pod.name} has no containers` }
      : { container: first };
  }
  if (pod.containers.includes(container) || pod.sidecars.includes(container)) return { container };
  return { container, invalid: `pod ${pod.namespace}/${pod.name} has no container "${container}"` };
}

/** A Go duration in milliseconds; unset, malformed, zero or negative gives the fallback. */
export function timeoutMsOf(value: string | undefined, fallbackMs: number): number {
  const ms = value === undefined ? undefined : parseDuration(value);
  // Velero: a zero timeout means the default; a negative one would mean none at all, which we refuse.
  return ms === undefined || ms <= 0 ? fallbackMs : ms;
}

function settle(options: {
  pod: HookPod;
  input: ExecHookInput;
  hookName: string;
  source: PodExecHook['source'];
  phase: HookPhase;
}): PodExecHook {
  const { input } = options;
  const where = hookContainer(options.pod, input.container);
  return {
    hookName: options.hookName,
    source: options.source,
    phase: options.phase,
    container: where.container,
    command: [...input.command],
    onError: input.onError ?? DEFAULT_ON_ERROR,
    timeoutMs: timeoutMsOf(input.timeout, DEFAULT_EXEC_TIMEOUT_MS),
    ...(where.invalid ? { invalid: where.invalid } : {}),
    ...(input.command.length === 0 ? { invalid: 'the hook has no command' } : {}),
  };
}

export interface PodHooks {
  /** In the order they run. */
  readonly hooks: readonly PodExecHook[];
  readonly warnings: readonly string[];
}

/**
 * The backup hooks of one phase for a pod, in run order. Velero: the annotation hook, when
 * present, is the only one (spec hooks are ignored for that pod and phase); otherwise every
 * matching spec entry contributes its `pre` (or `post`) list, entries in spec order.
 */
export function backupHooksForPod(options: {
  pod: HookPod;
  phase: HookPhase;
  specs: readonly BackupHookSpec[];
}): PodHooks {
  const { pod, phase } = options;
  const fromAnnotations = backupHookFromAnnotations(pod.annotations, phase);
  const warnings = fromAnnotations.warnings.map((w) => `pod ${pod.namespace}/${pod.name}: ${w}`);
  if (fromAnnotations.hook) {
    return {
      hooks: [
        settle({
          pod,
          input: fromAnnotations.hook,
          hookName: ANNOTATION_HOOK_NAME,
          source: 'annotation',
          phase,
        }),
      ],
      warnings,
    };
  }
  const hooks: PodExecHook[] = [];
  for (const spec of options.specs) {
    if (!hookSelects({ spec, namespace: pod.namespace, labels: pod.labels })) continue;
    for (const entry of (phase === 'pre' ? spec.pre : spec.post) ?? []) {
      hooks.push(settle({ pod, input: entry.exec, hookName: spec.name, source: 'spec', phase }));
    }
  }
  return { hooks, warnings };
}

/** Why a pod's hooks are not run, or undefined when they are: only Running pods run hooks. */
export function podHookSkipReason(pod: HookPod): string | undefined {
  if (pod.phase === 'Running') return undefined;
  return `pod ${pod.namespace}/${pod.name} is ${pod.phase ?? 'without a phase'}, not Running: its hooks are not run`;
}
