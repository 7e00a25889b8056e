/**
 * Which resources a backup collects, with Velero's two filter styles
 * (pkg/util/collections/includes_excludes.go):
 * - old: includedResources/excludedResources plus includeClusterResources (unset: cluster-scoped
 *   resources only when every namespace is backed up; false: never; true: as the lists say);
 * - scoped: included/excluded cluster-scoped and namespace-scoped lists (cluster-scoped
 *   include empty: none but related items; `*`: all).
 * Names are already resolved to group-resources (`deployments.apps`).
 */
import { globMatches } from './glob.js';
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

/** A resource policy's `includeExcludePolicy`, its names resolved to group-resources. */
export interface PolicyResourceLists {
  readonly clusterScoped: IncludesExcludes;
  readonly namespaceScoped: IncludesExcludes;
}

/** Whether a list names the value (Velero's glob set `match`: `*` and patterns included). */
const names = (list: readonly string[], value: string): boolean =>
  list.some((p) => p === '*' || globMatches(p, value));

/** Adds what the policy says to one scope's lists; the backup's own word on a resource wins. */
function combineScope(own: IncludesExcludes, policy: IncludesExcludes): IncludesExcludes {
  const includes = [...own.includes];
  const excludes = [...own.excludes];
  const decided = (gr: string): boolean => names(includes, gr) || names(excludes, gr);
  for (const gr of policy.excludes) if (!decided(gr)) excludes.push(gr);
  for (const gr of policy.includes) if (!decided(gr)) includes.push(gr);
  return { includes, excludes };
}

/**
 * The backup's resource filter with its resource policy's `includeExcludePolicy` merged in, as
 * Velero 1.17 does (`ScopeIncludesExcludes.CombineWithPolicy`, design "include exclude policy in
 * resource policy"): the policy's lists work as the backup's scoped lists of the same names, and
 * where both speak of a resource the backup's lists win. A policy exclude is added only when the
 * backup neither includes nor excludes the resource (an include of `*` includes it); likewise a
 * policy include. A backup without resource filters takes the policy's lists as its scoped
 * filters. Old-style filters cannot be combined (ValidateBackup refuses the request; Velero
 * fails its validation): such a filter comes back unchanged.
 */
export function combineWithIncludeExcludePolicy(
  filter: ResourceFilter,
  policy: PolicyResourceLists,
): ResourceFilter {
  let scoped: Extract<ResourceFilter, { style: 'scoped' }>;
  if (filter.style === 'old') {
    const { resources } = filter;
    if (
      resources.includes.length > 0 ||
      resources.excludes.length > 0 ||
      filter.includeClusterResources !== undefined
    )
      return filter;
    const none = { includes: [], excludes: [] };
    scoped = { style: 'scoped', clusterScoped: none, namespaceScoped: none };
  } else {
    scoped = filter;
  }
  return {
    style: 'scoped',
    clusterScoped: combineScope(scoped.clusterScoped, policy.clusterScoped),
    namespaceScoped: combineScope(scoped.namespaceScoped, policy.namespaceScoped),
  };
}
