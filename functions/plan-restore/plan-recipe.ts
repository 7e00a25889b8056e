/**
 * For a restore that follows a recipe (docs/recipes.md): reads the backup archive once more,
 * before planning, for what the split needs of each item (ref, labels, ItemBlock facts), and
 * decides the restore step of each backed-up item (shared/domain/recipes/restore-groups.ts).
 * The plan then writes each step's items as phases of their own. Reads the working data and the
 * archive; writes nothing.
 */
import { readBackupArchive } from '../../shared/adapters/backup-archive-reader.js';
import type { Recipe } from '../../shared/contracts/recipe.js';
import type { RestoreRun } from '../../shared/contracts/restore-run.js';
import { factsOf } from '../../shared/domain/backup/item-blocks.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import { groupResource } from '../../shared/domain/kubernetes/api-resources.js';
import type { ItemRef } from '../../shared/domain/kubernetes/item-ref.js';
import type { RecipeGroupFilter } from '../../shared/domain/recipes/groups.js';
import {
  assignRestoreSteps,
  type RestoreGroupItem,
  type RestoreStepGroup,
} from '../../shared/domain/recipes/restore-groups.js';
import { restorable } from '../../shared/domain/restore/order.js';
import { placedAtPath } from '../../shared/domain/restore/placement.js';
import { backupKeys, restoreWorkKeys } from '../../shared/domain/storage/keys.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { readStoredRecipe } from '../common/recipe-reference.js';

export interface RecipeStepOutline {
  readonly index: number;
  readonly kind: 'group' | 'hook';
  readonly name: string;
  /** A hook step whose commands may outlast the inline limit: the hook runner runs it. */
  readonly long: boolean;
}

export interface RecipeRestorePlan {
  /** The restore workflow's steps, in order. */
  readonly steps: readonly RecipeStepOutline[];
  /** The step of a backed-up item, by `groupResource/namespace/name`; undefined: not restored. */
  stepOf(key: string): number | undefined;
  /** The first group step: where what the restore adds of its own (namespaces, CRDs) goes at the latest. */
  readonly firstGroupStep: number;
}

export const itemKey = (groupResource: string, namespace: string, name: string): string =>
  `${groupResource}/${namespace}/${name}`;

function refOf(groupResource: string, namespace: string, name: string): ItemRef {
  const dot = groupResource.indexOf('.');
  return dot < 0
    ? { group: '', version: '', resource: groupResource, namespace, name }
    : {
        group: groupResource.slice(dot + 1),
        version: '',
        resource: groupResource.slice(0, dot),
        namespace,
        name,
      };
}

/** The recipe's restore steps and each item's step, or undefined for a restore without a recipe. */
export async function planRecipeSteps(options: {
  run: RestoreRun;
  store: ObjectStore;
  /** A hook step whose commands could run longer than this goes to the hook runner. */
  inlineHookLimitMs: number;
  signal?: AbortSignal;
}): Promise<RecipeRestorePlan | undefined> {
  const { run, store } = options;
  const work = restoreWorkKeys(run);
  const recipeKeys = await store.list(work.recipe, { signal: options.signal });
  if (!recipeKeys.includes(work.recipe)) return undefined;
  const recipe = await readStoredRecipe({
    store,
    key: work.recipe,
    of: `restore ${run.name}`,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const workflow = recipe.workflows.restore;
  if (!workflow) throw new LifeboatError(`the recipe of restore ${run.name} has no restore workflow`);
  const steps: RecipeStepOutline[] = workflow.map((s, index) => {
    if ('group' in s) return { index, kind: 'group', name: s.group, long: false };
    // A hook's commands run one after another on each pod, the pods at once (as at backup).
    const hook = recipe.hooks.find((h) => h.name === s.hook);
    const worstCaseMs = hook ? hook.commands.length * hook.timeoutMs : 0;
    return { index, kind: 'hook', name: s.hook, long: worstCaseMs > options.inlineHookLimitMs };
  });
  const items: RestoreGroupItem[] = [];
  const body = await store.getStream(backupKeys(run.backupName).contents);
  if (!body) throw new LifeboatError(`the backup ${run.backupName} has no contents`);
  await readBackupArchive({
    body,
    onItem: async (entry) => {
      if (entry.version || !restorable(entry.groupResource)) return;
      const ref = refOf(entry.groupResource, entry.namespace, entry.name);
      // As the archive pass will see it: where its path says.
      const { object } = placedAtPath(entry);
      const labels = (object.metadata as { labels?: Record<string, string> } | undefined)?.labels ?? {};
      items.push({ ref, labels, facts: factsOf(ref, object) });
    },
  });
  const assigned = assignRestoreSteps({
    items,
    ...restoreGroups(recipe, steps),
    groupNamed: (name) => recipe.groups.find((g) => g.name === name),
  });
  const byKey = new Map<string, number>();
  for (const [i, item] of items.entries()) {
    const step = assigned[i];
    if (step !== undefined)
      byKey.set(itemKey(groupResource(item.ref), item.ref.namespace, item.ref.name), step);
  }
  return {
    steps,
    stepOf: (key) => byKey.get(key),
    firstGroupStep: steps.find((s) => s.kind === 'group')?.index ?? 0,
  };
}

/** The backup workflow's groups, and the restore workflow's group steps with their sources. */
function restoreGroups(
  recipe: Recipe,
  steps: readonly RecipeStepOutline[],
): { backupGroups: RecipeGroupFilter[]; steps: RestoreStepGroup[] } {
  const named = (name: string) => recipe.groups.find((g) => g.name === name);
  return {
    backupGroups: (recipe.workflows.backup ?? []).flatMap((s) =>
      'group' in s ? (named(s.group) ?? []) : [],
    ),
    steps: steps.flatMap((s) => {
      const filter = s.kind === 'group' ? named(s.name) : undefined;
      return filter ? [{ step: s.index, filter, source: filter.backupGroup ?? filter.name }] : [];
    }),
  };
}
