/**
 * Which group step of a recipe's restore workflow restores each backed-up item
 * (docs/recipes.md). A restore group restores part of what one backup group took: the backup
 * records no groups (its archive is Velero's), so the backup's split is worked out again from the
 * items themselves, with the backup's own rule (shared/domain/recipes/groups.ts): the same
 * ItemBlocks (a pod with its claims, a claim with its volume), and each item in the first group
 * of the backup workflow that selects it. Then, in restore workflow order, a restore step takes,
 * of its source group's items not yet taken, those its own filters select, with the items of the
 * same ItemBlock its filters admit whatever their labels (a marked claim brings its volume, as
 * at backup). An item no restore step takes is not restored; none is restored twice.
 * Pure: given refs, labels and block facts, never objects.
 */
import { buildItemBlocks, type ItemFacts } from '../backup/item-blocks.js';
import { itemIdentity } from '../kubernetes/item-ref.js';
import { assignBlockToGroups, type GroupedItem, type RecipeGroupFilter } from './groups.js';

/** A backed-up item: its ref and labels, and the facts its ItemBlock is built from. */
export interface RestoreGroupItem extends GroupedItem {
  readonly facts: ItemFacts;
}

/** One group step of the restore workflow: its own filters and the backup group it restores from. */
export interface RestoreStepGroup {
  readonly step: number;
  readonly filter: RecipeGroupFilter;
  /** The backup group's name (the group's own name when it has no backupGroup). */
  readonly source: string;
}

/**
 * The restore step of each item (same order as `items`), or undefined for an item no step takes.
 * `backupGroups` are the groups of the recipe's backup workflow, in order; a recipe without one
 * takes its restore steps' source groups, in the order they first appear.
 */
export function assignRestoreSteps(options: {
  items: readonly RestoreGroupItem[];
  backupGroups: readonly RecipeGroupFilter[];
  steps: readonly RestoreStepGroup[];
  /** How groups are found by name (the recipe's groups). */
  groupNamed: (name: string) => RecipeGroupFilter | undefined;
}): (number | undefined)[] {
  const sources =
    options.backupGroups.length > 0
      ? options.backupGroups
      : [...new Set(options.steps.map((s) => s.source))].flatMap((name) => options.groupNamed(name) ?? []);
  const index = new Map(options.items.map((item, i) => [itemIdentity(item.ref), i]));
  const assigned: (number | undefined)[] = options.items.map(() => undefined);
  for (const block of buildItemBlocks({ items: options.items.map((i) => i.facts) })) {
    const members = block.items.flatMap((ref) => index.get(itemIdentity(ref)) ?? []);
    const items = members.map((i) => options.items[i] as RestoreGroupItem);
    const sourceOf = assignBlockToGroups({ items, groups: sources }).map((g) =>
      g === undefined ? undefined : sources[g]?.name,
    );
    const stepOf = assignBlockToGroups({
      items,
      groups: options.steps.map((s) => s.filter),
      // Within the block, a restore step only sees its source group's items.
      eligible: (item, g) => sourceOf[item] === options.steps[g]?.source,
    });
    for (const [k, i] of members.entries()) {
      const g = stepOf[k];
      assigned[i] = g === undefined ? undefined : options.steps[g]?.step;
    }
  }
  return assigned;
}
