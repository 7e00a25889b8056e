/**
 * How one Kubernetes object is named throughout a backup: its API group, version, resource,
 * namespace ('' when cluster-scoped) and name. The identity of an item ignores the version:
 * one object read under two versions is one item.
 */
import { groupResource } from './api-resources.js';

export interface ItemRef {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  /** '' for cluster-scoped objects. */
  readonly namespace: string;
  readonly name: string;
}

/** The version-free identity of an item: `deployments.apps/ns/name` or `persistentvolumes//pv-1`. */
export function itemIdentity(ref: Omit<ItemRef, 'version'>): string {
  return `${groupResource(ref)}/${ref.namespace}/${ref.name}`;
}

/** `ns/name`, or `name` when cluster-scoped: the form Velero uses in lists and `orderedResources`. */
export function namespacedName(ref: Pick<ItemRef, 'namespace' | 'name'>): string {
  return ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
}
