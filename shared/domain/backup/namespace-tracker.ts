/**
 * Which namespace objects a backup holds, as Velero's namespace tracker decides
 * (pkg/backup/item_collector.go, nsTracker): the namespaces of selected items; active namespaces
 * whose own labels match the backup's label selector (or one of its OR selectors); and active
 * namespaces the namespace filter includes, except when the filter takes everything and a label
 * selector narrows the backup (Velero issue 7105: then only namespaces that hold selected items,
 * or match the selector themselves, are kept). Pure: never lists anything.
 */
import { type IncludesExcludes, selectsAll, shouldInclude } from '../kubernetes/includes-excludes.js';
import { type LabelSelector, type Labels, selectorMatches } from '../kubernetes/label-selector.js';

export interface NamespaceFacts {
  readonly name: string;
  readonly labels: Labels;
  /** `status.phase` is Active (a terminating namespace is not). */
  readonly active: boolean;
}

export interface NamespaceSelection {
  readonly namespaces: IncludesExcludes;
  readonly labelSelector?: LabelSelector | undefined;
  readonly orLabelSelectors?: readonly LabelSelector[] | undefined;
  /** Namespaces holding at least one selected item. */
  readonly withSelectedItems: ReadonlySet<string>;
}

export function namespaceTracked(namespace: NamespaceFacts, selection: NamespaceSelection): boolean {
  if (selection.withSelectedItems.has(namespace.name)) return true;
  if (!namespace.active) return false;
  const orSelectors = selection.orLabelSelectors ?? [];
  if (selection.labelSelector && selectorMatches(selection.labelSelector, namespace.labels)) return true;
  if (orSelectors.some((s) => selectorMatches(s, namespace.labels))) return true;
  const bySelector = selection.labelSelector !== undefined || orSelectors.length > 0;
  if (bySelector && selectsAll(selection.namespaces)) return false;
  return shouldInclude(selection.namespaces, namespace.name);
}

/**
 * Namespaces named literally in the include list that the cluster lacks: Velero logs each as an
 * error ("fail to get the namespace … specified in backup.Spec.IncludedNamespaces"). Patterns
 * (`*`, `?`, classes, alternatives) are never reported.
 */
export function missingIncludedNamespaces(
  includes: readonly string[],
  existing: ReadonlySet<string>,
): string[] {
  return includes.filter((name) => !/[*?[{]/.test(name) && !existing.has(name));
}
