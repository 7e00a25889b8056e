/**
 * Resolving the resource names of a backup request through discovery, as Velero does: names the
 * cluster does not serve are kept as written (so an include list never turns into "all").
 */

import type { ApiResource } from '../../shared/domain/api-resources.js';
import { resolveResourceName } from '../../shared/domain/api-resources.js';
import type { LogEvent } from '../../shared/domain/backup-log.js';
import type { BackupPlan } from '../../shared/domain/backup-plan.js';
import type { ResourceFilter } from '../../shared/domain/resource-filter.js';

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
