/**
 * Which resources a backup collects, with Velero's two filter styles
 * (pkg/util/collections/includes_excludes.go):
 * - old: includedResources/excludedResources plus includeClusterResources (unset: cluster-scoped
 *   resources only when every namespace is backed up; false: never; true: as the lists say);
 * - scoped: included/excluded cluster-scoped and namespace-scoped lists (cluster-scoped
 *   include empty: none but related items; `*`: all).
 * Names are already resolved to group-resources (`deployments.apps`).
 */
import { type IncludesExcludes, selectsAll, shouldInclude } from './includes-excludes.js';

export type ResourceFilter =
  | {
      readonly style: 'old';
      readonly resources: IncludesExcludes;
      readonly includeClusterResources?: boolean;
    }
  | {
      readonly style: 'scoped';
      readonly clusterScoped: IncludesExcludes;
      readonly namespaceScoped: IncludesExcludes;
    };

export interface ResourceKind {
  readonly groupResource: string;
  readonly namespaced: boolean;
}

/** Whether every object of this resource is collected directly (Velero `ShouldInclude`). */
export function collectsResource(options: {
  filter: ResourceFilter;
  namespaces: IncludesExcludes;
  resource: ResourceKind;
}): boolean {
  const { filter, namespaces, resource } = options;
  const gr = resource.groupResource;
  if (filter.style === 'old') {
    if (!resource.namespaced) {
      if (filter.includeClusterResources === false) return false;
      // Unset: cluster-scoped types only in a backup of every namespace (namespaces themselves
      // are filtered later, by the namespaces of the selected items).
      if (gr !== 'namespaces' && filter.includeClusterResources === undefined && !selectsAll(namespaces))
        return false;
    }
    return shouldInclude(filter.resources, gr);
  }
  if (resource.namespaced) return shouldInclude(filter.namespaceScoped, gr);
  const cluster = filter.clusterScoped;
  if (cluster.excludes.includes('*') || cluster.excludes.includes(gr)) return false;
  // No cluster-scoped lists: all of them, but only in a full backup (every namespace, every type).
  if (cluster.includes.length === 0 && cluster.excludes.length === 0) {
    return gr === 'namespaces' || (selectsAll(namespaces) && selectsAll(filter.namespaceScoped));
  }
  return cluster.includes.includes('*') || cluster.includes.includes(gr) || gr === 'namespaces';
}

/**
 * Whether an item related to a collected one (a PVC's PV, a service account's cluster role)
 * is kept out (Velero `ShouldExclude`): an explicit exclusion, or, with the old filters, a
 * cluster-scoped type when cluster resources are off, or are unset and not included by name.
 */
export function excludesRelated(options: { filter: ResourceFilter; resource: ResourceKind }): boolean {
  const { filter, resource } = options;
  const gr = resource.groupResource;
  if (filter.style === 'old') {
    if (filter.resources.excludes.includes(gr)) return true;
    if (!resource.namespaced) {
      if (filter.includeClusterResources === false) return true;
      if (filter.includeClusterResources === undefined && !shouldInclude(filter.resources, gr)) return true;
    }
    return false;
  }
  return (resource.namespaced ? filter.namespaceScoped : filter.clusterScoped).excludes.includes(gr);
}
