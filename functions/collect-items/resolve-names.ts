/**
 * Resolving the resource names of a backup request through discovery, as Velero does: names the
 * cluster does not serve are kept as written (so an include list never turns into "all"); those
 * of a resource policy's includeExcludePolicy are left out, as Velero leaves them out.
 */

import type { BackupPlan } from '../../shared/domain/backup/plan.js';
import type { ApiResource } from '../../shared/domain/kubernetes/api-resources.js';
import { groupResource, resolveResourceName } from '../../shared/domain/kubernetes/api-resources.js';
import type { PolicyResourceLists, ResourceFilter } from '../../shared/domain/kubernetes/resource-filter.js';
import type { LogEvent } from '../../shared/domain/storage/log.js';
import type { IncludeExcludePolicy } from '../../shared/domain/volumes/conditions.js';

/** Records one event in the collection log. */
export type Note = (level: LogEvent['level'], msg: string, fields?: LogEvent['fields']) => void;

export function resolveFilter(
  plan: BackupPlan,
  discovered: readonly ApiResource[],
  note: Note,
): ResourceFilter {
  const resolve = (names: readonly string[]): string[] =>
    names.flatMap((n) => {
      const gr = resolveResourceName(n, discovered);
      if (gr === undefined) {
        // Velero keeps an unknown name as written: dropping it could turn "only these" into "all".
        note('warning', 'Resource not found in the cluster', { resource: n });
        return [n];
      }
      return [gr];
    });
  const ie = (x: { includes: readonly string[]; excludes: readonly string[] }) => ({
    includes: resolve(x.includes),
    excludes: resolve(x.excludes),
  });
  const f = plan.resourceFilter;
  if (f.style === 'old') {
    return {
      style: 'old',
      resources: ie(f.resources),
      ...(f.includeClusterResources !== undefined
        ? { includeClusterResources: f.includeClusterResources }
        : {}),
    };
  }
  return { style: 'scoped', clusterScoped: ie(f.clusterScoped), namespaceScoped: ie(f.namespaceScoped) };
}

/**
 * A resource policy's includeExcludePolicy with its names resolved as Velero resolves them
 * (scopeResourceMapFunc): a name the cluster does not serve, or a resource of the other scope,
 * is left out of its list, with a warning.
 */
export function resolvePolicyLists(
  policy: IncludeExcludePolicy,
  discovered: readonly ApiResource[],
  note: Note,
): PolicyResourceLists {
  const resolve = (names: readonly string[] | null | undefined, namespaced: boolean): string[] =>
    (names ?? []).flatMap((n) => {
      const gr = resolveResourceName(n, discovered);
      const resource = discovered.find((r) => groupResource(r) === gr);
      if (gr === undefined || !resource) {
        note('warning', 'includeExcludePolicy names a resource not found in the cluster, ignored', {
          resource: n,
        });
        return [];
      }
      if (resource.namespaced !== namespaced) {
        note(
          'warning',
          `includeExcludePolicy lists a ${resource.namespaced ? 'namespace' : 'cluster'}-scoped resource among the ${namespaced ? 'namespace' : 'cluster'}-scoped ones, ignored`,
          { resource: n },
        );
        return [];
      }
      return [gr];
    });
  return {
    clusterScoped: {
      includes: resolve(policy.includedClusterScopedResources, false),
      excludes: resolve(policy.excludedClusterScopedResources, false),
    },
    namespaceScoped: {
      includes: resolve(policy.includedNamespaceScopedResources, true),
      excludes: resolve(policy.excludedNamespaceScopedResources, true),
    },
  };
}

export function resolveOrdered(
  plan: BackupPlan,
  discovered: readonly ApiResource[],
  note: Note,
): Record<string, readonly string[]> {
  const out: Record<string, readonly string[]> = {};
  for (const [name, list] of Object.entries(plan.orderedResources)) {
    const gr = resolveResourceName(name, discovered);
    if (gr === undefined)
      note('warning', 'orderedResources names an unknown resource, ignored', { resource: name });
    else out[gr] = list;
  }
  return out;
}
