/**
 * Which group step of a recipe's backup workflow backs up each item (docs/recipes.md). Within
 * what the request selects, an item belongs to the first group, in workflow order, that selects
 * it — its resource type (`persistentvolumeclaims`, `deployments.apps`), its namespace (a
 * Namespace object: its own name), cluster scope, and its labels — or that admits its type and
 * place while selecting a related item of the same ItemBlock by labels (as Velero backs up a
 * PVC's PV whatever the PV's labels, when the backup's resource filter allows PVs). An item no
 * group takes is not backed up. Every item lands in at most one group: never twice in a backup.
 * Pure: given refs and labels, never objects.
 */
import { groupResource } from '../kubernetes/api-resources.js';
import { type IncludesExcludes, shouldInclude } from '../kubernetes/includes-excludes.js';
import type { ItemRef } from '../kubernetes/item-ref.js';
import { type LabelSelector, selectorMatches } from '../kubernetes/label-selector.js';

/** A recipe group's filters (shared/contracts/recipe.ts RecipeGroup). */
export interface RecipeGroupFilter {
  readonly name: string;
  readonly includedResourceTypes?: readonly string[];
  readonly excludedResourceTypes?: readonly string[];
  readonly includedNamespaces?: readonly string[];
  readonly excludedNamespaces?: readonly string[];
  readonly labelSelector?: LabelSelector;
  /** false: no cluster-scoped items but Namespace objects; unset or true: as the request. */
  readonly includeClusterResources?: boolean;
}

export interface GroupedItem {
  readonly ref: ItemRef;
  readonly labels: Readonly<Record<string, string>>;
}

const ie = (includes?: readonly string[], excludes?: readonly string[]): IncludesExcludes => ({
  includes: includes ?? [],
  excludes: excludes ?? [],
});

/** Whether the group takes an item of this type and place, labels aside. */
export function groupAdmits(group: RecipeGroupFilter, ref: ItemRef): boolean {
  const type = groupResource(ref);
  if (!shouldInclude(ie(group.includedResourceTypes, group.excludedResourceTypes), type)) return false;
  const namespaces = ie(group.includedNamespaces, group.excludedNamespaces);
  // Velero: a Namespace object follows the namespace filter, not includeClusterResources.
  if (type === 'namespaces') return shouldInclude(namespaces, ref.name);
  if (ref.namespace) return shouldInclude(namespaces, ref.namespace);
  return group.includeClusterResources !== false;
}

/** Whether the group selects the item on its own: admitted, and its labels match. */
export function groupSelects(group: RecipeGroupFilter, item: GroupedItem): boolean {
  return (
    groupAdmits(group, item.ref) &&
    (!group.labelSelector || selectorMatches(group.labelSelector, item.labels))
  );
}

/**
 * The group (index into `groups`, the workflow's group steps in order) of each item of one
 * ItemBlock, or undefined for an item no group takes.
 */
export function assignBlockToGroups(options: {
  items: readonly GroupedItem[];
  groups: readonly RecipeGroupFilter[];
  /** Whether group `g` may take item `i` at all (unset: any); a restore step sees its source's items only. */
  eligible?: (i: number, g: number) => boolean;
}): (number | undefined)[] {
  const assigned: (number | undefined)[] = options.items.map(() => undefined);
  const eligible = options.eligible ?? (() => true);
  for (const [g, group] of options.groups.entries()) {
    const free = options.items.flatMap((_, i) => (assigned[i] === undefined && eligible(i, g) ? [i] : []));
    const direct = free.filter((i) => groupSelects(group, options.items[i] as GroupedItem));
    if (direct.length === 0) continue;
    for (const i of direct) assigned[i] = g;
    // The block's other items go with them where the group admits their type and place.
    for (const i of free) {
      if (assigned[i] === undefined && groupAdmits(group, (options.items[i] as GroupedItem).ref))
        assigned[i] = g;
    }
  }
  return assigned;
}
