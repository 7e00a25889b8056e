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

/** Whether every object of this resource is collected directly. */
export function collectsResource(options: {
  filter: ResourceFilter;
  namespaces: IncludesExcludes;
  resource: ResourceKind;
}): boolean {
  const { filter, namespaces, resource } = options;
  if (filter.style === 'old') {
    if (!resource.namespaced) {
      if (filter.includeClusterResources === false) return false;
      if (filter.includeClusterResources === undefined && !selectsAll(namespaces)) return false;
    }
    return shouldInclude(filter.resources, resource.groupResource);
  }
  if (resource.namespaced) return shouldInclude(filter.namespaceScoped, resource.groupResource);
  if (filter.clusterScoped.includes.length === 0) return false;
  return shouldInclude(filter.clusterScoped, resource.groupResource);
}

/**
 * Whether an item related to a collected one (a pod's PV, a service account's cluster role)
 * may be pulled into the backup: only an explicit exclusion keeps it out (Velero `ShouldExclude`).
 */
export function excludesRelated(options: { filter: ResourceFilter; resource: ResourceKind }): boolean {
  const { filter, resource } = options;
  const explicitlyExcluded = (ie: IncludesExcludes): boolean =>
    ie.excludes.includes('*') || ie.excludes.includes(resource.groupResource);
  if (filter.style === 'old') {
    if (!resource.namespaced && filter.includeClusterResources === false) return true;
    return explicitlyExcluded(filter.resources);
  }
  return explicitlyExcluded(resource.namespaced ? filter.namespaceScoped : filter.clusterScoped);
}
