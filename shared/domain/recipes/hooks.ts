/**
 * Where a recipe's hook step runs (docs/recipes.md): on every Running pod the hook selects —
 * within the request's namespaces, narrowed by the hook's own namespaces and label selector — or
 * on the first one only (`singlePodOnly`, by namespace then name). Each of its commands becomes
 * one exec hook, run in order with the hook's container, timeout and onError.
 * A hook that selects no Running pod fails when its onError is Fail (the workflow must not go on
 * as if it had run) and is a warning otherwise.
 * Pure: the pods are given; nothing runs here.
 */
import type { HookErrorMode, HookPhase } from '../hooks/annotations.js';
import { type HookPod, hookContainer, type PodExecHook, podHookSkipReason } from '../hooks/backup.js';
import { type IncludesExcludes, shouldInclude } from '../kubernetes/includes-excludes.js';
import { type LabelSelector, selectorMatches } from '../kubernetes/label-selector.js';

/** A recipe hook as shared/contracts/recipe.ts settles it. */
export interface RecipeHookSpec {
  readonly name: string;
  readonly labelSelector?: LabelSelector;
  readonly includedNamespaces?: readonly string[];
  readonly excludedNamespaces?: readonly string[];
  readonly container?: string;
  readonly commands: readonly (readonly string[])[];
  readonly timeoutMs: number;
  readonly onError: HookErrorMode;
  readonly singlePodOnly: boolean;
}

export interface RecipeHookTargets {
  /** The pods the hook runs on, in order, each with one exec hook per command. */
  readonly pods: readonly { readonly pod: HookPod; readonly hooks: readonly PodExecHook[] }[];
  readonly warnings: readonly string[];
  /** Set when the step fails before running anything (no pod to run on, with onError Fail). */
  readonly failure?: string;
}

/** The phase a recipe hook step is logged under: `pre` before the workflow's first group, else `post`. */
export function recipeStepPhase(
  steps: readonly ({ group: string } | { hook: string })[],
  index: number,
): HookPhase {
  return steps.slice(0, index).some((s) => 'group' in s) ? 'post' : 'pre';
}

export function recipeHookTargets(options: {
  hook: RecipeHookSpec;
  /** Pods of the cluster, read by `hookPodOf`. */
  pods: readonly HookPod[];
  /** The request's namespaces: a recipe hook never reaches beyond them. */
  namespaces: IncludesExcludes;
  phase: HookPhase;
}): RecipeHookTargets {
  const { hook } = options;
  const own: IncludesExcludes = {
    includes: hook.includedNamespaces ?? [],
    excludes: hook.excludedNamespaces ?? [],
  };
  const selected = options.pods
    .filter(
      (p) =>
        shouldInclude(options.namespaces, p.namespace) &&
        shouldInclude(own, p.namespace) &&
        (!hook.labelSelector || selectorMatches(hook.labelSelector, p.labels)),
    )
    .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
  const warnings: string[] = [];
  const running: HookPod[] = [];
  for (const pod of selected) {
    const skip = podHookSkipReason(pod);
    if (skip) warnings.push(`recipe hook ${hook.name}: ${skip}`);
    else running.push(pod);
  }
  const targets = hook.singlePodOnly ? running.slice(0, 1) : running;
  if (targets.length === 0) {
    const message = `recipe hook ${hook.name} selects no Running pod`;
    return hook.onError === 'Fail'
      ? { pods: [], warnings, failure: message }
      : { pods: [], warnings: [...warnings, message] };
  }
  return {
    pods: targets.map((pod) => {
      const where = hookContainer(pod, hook.container);
      return {
        pod,
        hooks: hook.commands.map(
          (command): PodExecHook => ({
            hookName: hook.name,
            source: 'recipe',
            phase: options.phase,
            container: where.container,
            command: [...command],
            onError: hook.onError,
            timeoutMs: hook.timeoutMs,
            ...(where.invalid ? { invalid: where.invalid } : {}),
          }),
        ),
      };
    }),
    warnings,
  };
}
