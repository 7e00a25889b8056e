/**
 * The cluster-scoped items CollectItems adds after the namespaced ones: the namespaces of the
 * selected items, and the CRDs of the backed-up custom resources.
 */

import type { BlockItem } from '../../shared/contracts/backup-run.js';
import { missingIncludedNamespaces, namespaceTracked } from '../../shared/domain/backup/namespace-tracker.js';
import { type BackupPlan, excludedByLabel } from '../../shared/domain/backup/plan.js';
import type { ApiResource } from '../../shared/domain/kubernetes/api-resources.js';
import { groupResource } from '../../shared/domain/kubernetes/api-resources.js';
import type { ItemRef } from '../../shared/domain/kubernetes/item-ref.js';
import { excludesRelated, type ResourceFilter } from '../../shared/domain/kubernetes/resource-filter.js';
import type { CollectItemsDeps } from './deps.js';
import { listAll, meta } from './list-all.js';
import type { Note } from './resolve-names.js';

export async function emitNamespaces(options: {
  deps: CollectItemsDeps;
  plan: BackupPlan;
  namespacesWithItems: ReadonlySet<string>;
  /** Namespace objects explicitly excluded by the resource filter. */
  excluded: boolean;
  discovered: readonly ApiResource[];
  emitBlock: (items: BlockItem[]) => Promise<void>;
  note: Note;
}): Promise<void> {
  const { deps, plan } = options;
  const resource = options.discovered.find((r) => r.group === '' && r.resource === 'namespaces');
  if (!resource || options.excluded) return;
  const existing = new Set<string>();
  for await (const object of listAll({
    cluster: deps.cluster,
    resource,
    pageSize: 500,
    labelSelector: undefined,
    signal: deps.signal,
    onRestart: () => undefined,
  })) {
    const m = meta(object);
    existing.add(m.name);
    const phase = (object.status as { phase?: unknown } | undefined)?.phase;
    const wanted = namespaceTracked(
      { name: m.name, labels: m.labels, active: !m.deleting && (phase === undefined || phase === 'Active') },
      {
        namespaces: plan.namespaces,
        labelSelector: plan.labelSelector,
        orLabelSelectors: plan.orLabelSelectors,
        withSelectedItems: options.namespacesWithItems,
      },
    );
    if (!wanted || excludedByLabel(m.labels)) continue;
    const ref: ItemRef = {
      group: '',
      version: resource.version,
      resource: 'namespaces',
      namespace: '',
      name: m.name,
    };
    await options.emitBlock([{ ref, kind: 'Namespace', preferred: true, json: JSON.stringify(object) }]);
  }
  // Velero: an included namespace the cluster lacks is an error of the backup.
  for (const name of missingIncludedNamespaces(plan.namespaces.includes, existing)) {
    options.note('error', 'A namespace named in includedNamespaces does not exist', { namespace: name });
  }
}

export async function emitCrds(options: {
  deps: CollectItemsDeps;
  filter: ResourceFilter;
  namespaces: BackupPlan['namespaces'];
  customGroupResources: ReadonlySet<string>;
  emitted: ReadonlySet<string>;
  discovered: readonly ApiResource[];
  emitBlock: (items: BlockItem[]) => Promise<void>;
  note: Note;
}): Promise<void> {
  const crdGr = 'customresourcedefinitions.apiextensions.k8s.io';
  const resource = options.discovered.find((r) => groupResource(r) === crdGr);
  if (!resource || options.customGroupResources.size === 0) return;
  if (excludesRelated({ filter: options.filter, resource: { groupResource: crdGr, namespaced: false } }))
    return;

  for await (const object of listAll({
    cluster: options.deps.cluster,
    resource,
    pageSize: 500,
    labelSelector: undefined,
    signal: options.deps.signal,
    onRestart: () => undefined,
  })) {
    const m = meta(object);
    // CRDs selected directly (and matching any label selector) were backed up already.
    if (!options.customGroupResources.has(m.name) || options.emitted.has(m.name)) continue;
    const ref: ItemRef = {
      group: resource.group,
      version: resource.version,
      resource: resource.resource,
      namespace: '',
      name: m.name,
    };
    options.note('info', 'Backing up the CRD of backed-up custom resources', { crd: m.name });
    await options.emitBlock([{ ref, kind: resource.kind, preferred: true, json: JSON.stringify(object) }]);
  }
}
