/**
 * A drill's target namespaces, and what a drill does with each before it restores, so that a
 * repeat drill (a Schedule's, every week, under the same mappings) never finds last week's
 * objects and counts them as restored: a namespace an earlier drill made is deleted, and the
 * drill waits until it is gone; a namespace being deleted is waited on; a namespace no drill made
 * is never touched (the drill restores into it as a restore would, and its checks see what is
 * there). A drill made a namespace when the namespace carries the restore's own label,
 * `velero.io/restore-name` (Velero labels every object a restore creates, namespaces included),
 * naming a drill (a drill's restore is named as the drill). Pure: the cluster and the store are
 * read by the caller.
 */
import type { ExpectedItem } from './expected-items.js';

/** Velero's label on every object a restore created, the restore's name as its value. */
export const RESTORE_NAME_LABEL = 'velero.io/restore-name';

/** A target namespace as the cluster has it. */
export interface SeenNamespace {
  readonly name: string;
  readonly exists: boolean;
  /** Its deletion has begun (metadata.deletionTimestamp). */
  readonly terminating: boolean;
  /** The restore that created it (its RESTORE_NAME_LABEL), when one did. */
  readonly restoreName?: string;
}

export interface NamespaceClearing {
  /** Namespaces an earlier drill made, to delete now. */
  readonly toDelete: readonly string[];
  /** Namespaces still being deleted: the restore waits for them. */
  readonly deleting: readonly string[];
  /** Namespaces no drill made: left as they are. */
  readonly kept: readonly string[];
}

/** The namespaces a drill restores into: every namespace of the backup's items, under the mappings. */
export function drillTargetNamespaces(items: readonly ExpectedItem[]): string[] {
  const names = new Set<string>();
  for (const item of items) {
    if (item.namespace) names.add(item.namespace);
    if (item.apiVersion === 'v1' && item.kind === 'Namespace') names.add(item.name);
  }
  return [...names].sort();
}

/** The restores that made the namespaces seen: those the caller asks the store whether they were drills. */
export function restoresThatMade(seen: readonly SeenNamespace[]): string[] {
  return [...new Set(seen.flatMap((n) => (n.exists && n.restoreName ? [n.restoreName] : [])))].sort();
}

/**
 * What to do with each target namespace before the drill `drill` restores: `drills` are the
 * restores among restoresThatMade that were drills. The drill's own namespaces (a re-run of its
 * step) are never deleted.
 */
export function namespaceClearing(options: {
  readonly seen: readonly SeenNamespace[];
  readonly drill: string;
  readonly drills: ReadonlySet<string>;
}): NamespaceClearing {
  const toDelete: string[] = [];
  const deleting: string[] = [];
  const kept: string[] = [];
  for (const ns of options.seen) {
    if (!ns.exists) continue;
    if (ns.terminating) deleting.push(ns.name);
    else if (ns.restoreName && ns.restoreName !== options.drill && options.drills.has(ns.restoreName))
      toDelete.push(ns.name);
    else kept.push(ns.name);
  }
  return { toDelete, deleting, kept };
}
