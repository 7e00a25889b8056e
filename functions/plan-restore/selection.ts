/**
 * What a restore request selects of a backup's items (Velero's restore filters): namespaces,
 * resources (names resolved against the target cluster's discovery), cluster-scoped items, label
 * selectors and `includeItems`. Pure: decides from the request and the entry, reads nothing.
 */
import type { ArchiveItem } from '../../shared/adapters/backup-archive-reader.js';
import type { RestoreSpec } from '../../shared/contracts/restore-request.js';
import { type ApiResource, resolveResourceName } from '../../shared/domain/kubernetes/api-resources.js';
import {
  type IncludesExcludes,
  selectsAll,
  shouldInclude,
} from '../../shared/domain/kubernetes/includes-excludes.js';
import { itemSelected } from '../../shared/domain/kubernetes/label-selector.js';

/** One item `includeItems` names (`<resource>/<name>` or `<resource>/<namespace>/<name>`). */
interface WantedItem {
  readonly groupResource: string;
  readonly namespace: string;
  readonly name: string;
}

export interface RestoreSelection {
  readonly namespaces: IncludesExcludes;
  readonly resources: IncludesExcludes;
  /** Cluster-scoped items are restored: asked for, or not refused and every namespace selected. */
  readonly clusterScopedAllowed: boolean;
  /** Only these items when the request lists some. */
  readonly wantedItems: readonly WantedItem[] | undefined;
  readonly labelSelectors: Parameters<typeof itemSelected>[0];
  /** Resource names as the request spells them, resolved to the target cluster's group resources. */
  readonly resolve: (names: readonly string[] | undefined) => string[];
}

export function restoreSelection(options: {
  spec: RestoreSpec;
  discovered: readonly ApiResource[];
}): RestoreSelection {
  const { spec, discovered } = options;
  const resolve = (names: readonly string[] | undefined): string[] =>
    (names ?? []).map((n) => resolveResourceName(n, discovered) ?? n);
  const namespaces: IncludesExcludes = {
    includes: spec.includedNamespaces ?? [],
    excludes: spec.excludedNamespaces ?? [],
  };
  return {
    namespaces,
    resources: { includes: resolve(spec.includedResources), excludes: resolve(spec.excludedResources) },
    clusterScopedAllowed:
      spec.includeClusterResources === true ||
      (spec.includeClusterResources !== false && selectsAll(namespaces)),
    wantedItems: spec.includeItems?.map((s) => {
      const [kind = '', ...rest] = s.split('/');
      return {
        groupResource: resolveResourceName(kind, discovered) ?? kind,
        namespace: rest.length === 2 ? (rest[0] ?? '') : '',
        name: rest.at(-1) ?? '',
      };
    }),
    labelSelectors: {
      ...(spec.labelSelector ? { labelSelector: spec.labelSelector } : {}),
      ...(spec.orLabelSelectors ? { orLabelSelectors: spec.orLabelSelectors } : {}),
    },
    resolve,
  };
}

/** Whether the request selects a backed-up item, by its namespace, resource, labels and name. */
export function selects(selection: RestoreSelection, entry: ArchiveItem): boolean {
  const gr = entry.groupResource;
  if (
    entry.namespace ? !shouldInclude(selection.namespaces, entry.namespace) : !selection.clusterScopedAllowed
  )
    return false;
  if (!shouldInclude(selection.resources, gr)) return false;
  const labels = ((entry.object.metadata as { labels?: Record<string, string> } | undefined)?.labels ??
    {}) as Record<string, string>;
  if (!itemSelected(selection.labelSelectors, labels)) return false;
  const { wantedItems } = selection;
  return (
    !wantedItems ||
    wantedItems.some(
      (w) => w.groupResource === gr && w.namespace === entry.namespace && w.name === entry.name,
    )
  );
}
