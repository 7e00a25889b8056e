/**
 * Where a hook step of a recipe's restore workflow runs (docs/recipes.md): on the pods of the
 * target cluster that the hook selects — in the namespaces the restore restores into (after
 * `namespaceMapping`; the hook's own namespace filters name the backed-up namespaces, as the
 * recipe was written for them), by its label selector — or on the first one only
 * (`singlePodOnly`: a Running one first, then by namespace and name). Unlike at backup, a pod
 * need not be Running yet: pods of workloads the restore just created come up after it, so the
 * step waits for their containers, as Velero's restore exec hooks do (hooks/restore-progress.ts).
 * Each command becomes one exec hook of the pod, run in order, with the hook's container,
 * timeout, wait timeout and onError. Pure: the pods are given; nothing runs here.
 */
import { type HookPod, hookContainer } from '../hooks/backup.js';
import type { PodRestoreExecHook } from '../hooks/restore.js';
import { type IncludesExcludes, shouldInclude } from '../kubernetes/includes-excludes.js';
import { selectorMatches } from '../kubernetes/label-selector.js';
import type { RecipeHookSpec } from './hooks.js';

export interface RestoreRecipeHookSpec extends RecipeHookSpec {
  /** How long the step waits for its pods and their containers. */
  readonly waitTimeoutMs: number;
}

/** The backed-up namespace a target namespace restores, or undefined when the restore writes none there. */
export function sourceNamespaceOf(
  target: string,
  namespaceMapping: Readonly<Record<string, string>>,
): string | undefined {
  const mapped = Object.entries(namespaceMapping).find(([, to]) => to === target);
  if (mapped) return mapped[0];
  // A namespace mapped elsewhere is not restored into itself.
  return namespaceMapping[target] === undefined ? target : undefined;
}

/** The pods the hook step runs on, in order. */
export function restoreRecipeHookPods(options: {
  hook: RestoreRecipeHookSpec;
  /** Pods of the target cluster, read by `hookPodOf`. */
  pods: readonly HookPod[];
  /** The restore's namespaces (backed-up names): a recipe hook never reaches beyond them. */
  namespaces: IncludesExcludes;
  namespaceMapping: Readonly<Record<string, string>>;
}): HookPod[] {
  const { hook } = options;
  const own: IncludesExcludes = {
    includes: hook.includedNamespaces ?? [],
    excludes: hook.excludedNamespaces ?? [],
  };
  const selected = options.pods
    .filter((p) => {
      const source = sourceNamespaceOf(p.namespace, options.namespaceMapping);
      return (
        source !== undefined &&
        shouldInclude(options.namespaces, source) &&
        shouldInclude(own, source) &&
        (!hook.labelSelector || selectorMatches(hook.labelSelector, p.labels))
      );
    })
    .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
  if (!hook.singlePodOnly) return selected;
  const first = selected.find((p) => p.phase === 'Running') ?? selected[0];
  return first ? [first] : [];
}

/** The pod's exec hooks for the step (one per command, in order), or why they cannot run in it. */
export function restoreRecipeExecHooks(
  pod: HookPod,
  hook: RestoreRecipeHookSpec,
): { container: string; hooks: PodRestoreExecHook[]; invalid?: string } {
  const where = hookContainer(pod, hook.container);
  return {
    container: where.container,
    hooks: hook.commands.map((command) => ({
      hookName: hook.name,
      source: 'recipe',
      phase: 'post',
      container: where.container,
      command: [...command],
      onError: hook.onError,
      timeoutMs: hook.timeoutMs,
      waitTimeoutMs: hook.waitTimeoutMs,
      waitForReady: false,
    })),
    ...(where.invalid ? { invalid: where.invalid } : {}),
  };
}
