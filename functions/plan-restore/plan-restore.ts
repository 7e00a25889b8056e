/**
 * PlanRestore: reads the whole backup archive first (a hostile archive fails here, before
 * anything is created), selects the items the request asks for, prepares each as Velero does,
 * and writes them in chunks per restore phase to the working data. A dry run writes nothing and
 * returns what would be created, updated or skipped, in order.
 */
import { readBackupArchive } from '../../shared/adapters/backup-archive-reader.js';
import { systemClock } from '../../shared/adapters/system-clock.js';
import { restoreRequest } from '../../shared/contracts/restore-request.js';
import type { PlannedItem, RestorePlan, RestoreRun } from '../../shared/contracts/restore-run.js';
import { resolveResourceName } from '../../shared/domain/api-resources.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import { type IncludesExcludes, selectsAll, shouldInclude } from '../../shared/domain/includes-excludes.js';
import { itemSelected } from '../../shared/domain/label-selector.js';
import { addedWithNamespace } from '../../shared/domain/namespace-defaults.js';
import { prepareForRestore, skipReason } from '../../shared/domain/restore-item.js';
import { restorable, restorePhases } from '../../shared/domain/restore-order.js';
import { backupKeys, restoreWorkKeys } from '../../shared/domain/storage-keys.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { Cluster, ClusterWriter } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { existingAction } from '../restore-phase/compare.js';
import { hookPreview, itemPlanner } from './plan-item.js';
import { loadBackupVolumeInfos, volumePlanner } from './plan-volumes.js';

export interface PlanRestoreDeps {
  readonly store: ObjectStore;
  readonly cluster: Cluster & ClusterWriter;
  readonly chunkSize?: number;
  /** Times the volume plan's log lines (the system clock unless set). */
  readonly clock?: Clock;
  readonly signal?: AbortSignal;
}

const CRDS = 'customresourcedefinitions.apiextensions.k8s.io';

export async function planRestore(input: { run: RestoreRun }, deps: PlanRestoreDeps): Promise<RestorePlan> {
  const { run } = input;
  const work = restoreWorkKeys(run);
  const raw = await deps.store.get(work.request);
  if (!raw) throw new LifeboatError(`the request of restore ${run.name} is missing from the working data`);
  const spec = restoreRequest.parse(JSON.parse(Buffer.from(raw).toString('utf8'))).restore.spec;
  const discovered = (await deps.cluster.discover({ ...(deps.signal ? { signal: deps.signal } : {}) }))
    .resources;
  const resolve = (names: readonly string[] | undefined): string[] =>
    (names ?? []).map((n) => resolveResourceName(n, discovered) ?? n);
  const namespaces: IncludesExcludes = {
    includes: spec.includedNamespaces ?? [],
    excludes: spec.excludedNamespaces ?? [],
  };
  const resources: IncludesExcludes = {
    includes: resolve(spec.includedResources),
    excludes: resolve(spec.excludedResources),
  };
  const clusterScopedAllowed =
    spec.includeClusterResources === true ||
    (spec.includeClusterResources !== false && selectsAll(namespaces));
  const wantedItems = spec.includeItems?.map((s) => {
    const [kind = '', ...rest] = s.split('/');
    return {
      groupResource: resolveResourceName(kind, discovered) ?? kind,
      namespace: rest.length === 2 ? (rest[0] ?? '') : '',
      name: rest.at(-1) ?? '',
    };
  });
  const options = {
    backupName: run.backupName,
    restoreName: run.name,
    ...(spec.namespaceMapping ? { namespaceMapping: spec.namespaceMapping } : {}),
    ...(spec.preserveNodePorts ? { preserveNodePorts: true } : {}),
  };
  // Preparation with resource modifiers and restoreStatus (Velero restoreItem's order).
  const planItem = await itemPlanner({ run, spec, store: deps.store, resolve });
  // PVs and PVCs wait for the volume decisions when the backup has volumes-info.
  const volumes = volumePlanner({
    run,
    spec,
    infos: await loadBackupVolumeInfos({ store: deps.store, backupName: run.backupName, ...signalOf(deps) }),
    cluster: deps.cluster,
    now: () => (deps.clock ?? systemClock).now(),
    ...signalOf(deps),
  });

  // Items by phase, flushed in chunks so memory stays bounded by chunk size × phases.
  const buffers = new Map<string, PlannedItem[]>();
  const chunksWritten = new Map<string, number>();
  const counts = new Map<string, number>();
  const crdCandidates = new Map<string, PlannedItem>();
  const customResourcesSelected = new Set<string>();
  const namespacesNeeded = new Set<string>();
  const namespaceObjects = new Map<string, PlannedItem>();
  let skipped = 0;
  const pending: { groupResource: string; chunk: PlannedItem[] }[] = [];
  const add = (item: PlannedItem): void => {
    const list = buffers.get(item.groupResource) ?? [];
    list.push(item);
    buffers.set(item.groupResource, list);
    counts.set(item.groupResource, (counts.get(item.groupResource) ?? 0) + 1);
    if (list.length >= (deps.chunkSize ?? 500)) {
      pending.push({ groupResource: item.groupResource, chunk: list });
      buffers.set(item.groupResource, []);
    }
  };
  // A dry run keeps its items for the preview; a real run writes chunks per resource.
  const dryRunItems: PlannedItem[] = [];
  const flush = async (): Promise<void> => {
    for (const { groupResource, chunk } of pending.splice(0)) {
      if (run.dryRun) {
        dryRunItems.push(...chunk);
        continue;
      }
      const n = chunksWritten.get(groupResource) ?? 0;
      chunksWritten.set(groupResource, n + 1);
      await deps.store.put(work.chunk(groupResource, n), JSON.stringify(chunk), {
        contentType: 'application/json',
      });
    }
  };

  const body = await deps.store.getStream(backupKeys(run.backupName).contents);
  if (!body) throw new LifeboatError(`the backup ${run.backupName} has no contents`);
  await readBackupArchive({
    body,
    onItem: async (entry) => {
      // Velero reads the plain path; the version folders are copies.
      if (entry.version) return;
      const gr = entry.groupResource;
      const labels = ((entry.object.metadata as { labels?: Record<string, string> } | undefined)?.labels ??
        {}) as Record<string, string>;
      if (!restorable(gr) || skipReason(gr, entry.object) !== undefined) {
        skipped++;
        return;
      }
      if (gr === 'namespaces') {
        namespaceObjects.set(entry.name, {
          groupResource: gr,
          sourceNamespace: '',
          object: prepareForRestore(entry.object, { ...options, groupResource: gr }),
        });
        return;
      }
      if (gr === CRDS) {
        crdCandidates.set(
          entry.name,
          planItem({ groupResource: gr, sourceNamespace: '', object: entry.object }),
        );
        return;
      }
      if (entry.namespace ? !shouldInclude(namespaces, entry.namespace) : !clusterScopedAllowed) return;
      if (!shouldInclude(resources, gr)) return;
      if (
        !itemSelected(
          {
            ...(spec.labelSelector ? { labelSelector: spec.labelSelector } : {}),
            ...(spec.orLabelSelectors ? { orLabelSelectors: spec.orLabelSelectors } : {}),
          },
          labels,
        )
      )
        return;
      if (
        wantedItems &&
        !wantedItems.some(
          (w) => w.groupResource === gr && w.namespace === entry.namespace && w.name === entry.name,
        )
      )
        return;
      if (gr.includes('.')) customResourcesSelected.add(gr);
      if (entry.namespace) namespacesNeeded.add(entry.namespace);
      if (volumes.holds(gr)) {
        volumes.hold({ groupResource: gr, sourceNamespace: entry.namespace, object: entry.object });
        return;
      }
      add(planItem({ groupResource: gr, sourceNamespace: entry.namespace, object: entry.object }));
      await flush();
    },
  });

  const volumePlan = await volumes.finish();
  for (const item of volumePlan.items) add(planItem(item));
  // Made by the restore, not backed up: prepared without the resource modifiers.
  for (const item of volumePlan.generated)
    add({
      groupResource: item.groupResource,
      sourceNamespace: item.sourceNamespace,
      object: prepareForRestore(item.object, { ...options, groupResource: item.groupResource }),
    });
  if (
    !run.dryRun &&
    (volumePlan.plan.native.length > 0 ||
      volumePlan.plan.provisioned.length > 0 ||
      volumePlan.plan.log.length > 0 ||
      volumePlan.plan.restoreInfos.length > 0)
  )
    await deps.store.put(work.volumes, JSON.stringify(volumePlan.plan), { contentType: 'application/json' });
  await flush();

  // CRDs: those the backup holds for the custom resources being restored (or all, when cluster
  // resources are restored and CRDs are not excluded).
  for (const [name, item] of crdCandidates) {
    const direct = clusterScopedAllowed && shouldInclude(resources, CRDS) && !wantedItems;
    if ((direct || customResourcesSelected.has(name)) && !resources.excludes.includes(CRDS)) add(item);
  }
  // Namespaces of restored items: from the backup, or plain ones (mapped names).
  for (const source of namespacesNeeded) {
    const target = spec.namespaceMapping?.[source] ?? source;
    add(
      namespaceObjects.get(source) ?? {
        groupResource: 'namespaces',
        sourceNamespace: '',
        object: {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: {
            name: target,
            labels: { 'velero.io/backup-name': run.backupName, 'velero.io/restore-name': run.name },
          },
        },
      },
    );
  }
  for (const [gr, list] of buffers) if (list.length > 0) pending.push({ groupResource: gr, chunk: list });
  buffers.clear();
  await flush();

  const order = restorePhases(counts.keys());
  const plan: RestorePlan = {
    dryRun: run.dryRun,
    nativeVolumes: volumePlan.plan.native.length,
    provisionedVolumes: volumePlan.plan.provisioned.length,
    phases: order.map((gr, index) => {
      const chunks = chunksWritten.get(gr) ?? 0;
      // Listed, not computed in the state machine: States.ArrayRange stops at 1,000 entries.
      return {
        index,
        groupResource: gr,
        chunks,
        items: counts.get(gr) ?? 0,
        chunkIndexes: Array.from({ length: chunks }, (_, i) => i),
      };
    }),
    totalItems: [...counts.values()].reduce((a, b) => a + b, 0),
    skipped,
  };
  if (!run.dryRun) return plan;
  return {
    ...plan,
    preview: await preview({
      items: dryRunItems,
      order,
      deps,
      policy: spec.existingResourcePolicy ?? 'none',
    }),
  };
}

/** What a restore would do with each item, in phase order, asking the cluster but changing nothing. */
async function preview(options: {
  items: readonly PlannedItem[];
  order: readonly string[];
  deps: PlanRestoreDeps;
  policy: 'none' | 'update';
}): Promise<NonNullable<RestorePlan['preview']>> {
  const out: NonNullable<RestorePlan['preview']> = [];
  // In a namespace the restore creates, the cluster itself adds these before the restore gets to
  // them; the restore then finds them existing.
  const newNamespaces = new Set<string>();
  for (const item of options.items.filter((i) => i.groupResource === 'namespaces')) {
    const exists = await options.deps.cluster.read({ resource: 'namespaces', object: item.object });
    if (!exists)
      newNamespaces.add(String((item.object.metadata as { name?: unknown } | undefined)?.name ?? ''));
  }
  const addedByCluster = (phase: string, namespace: string | undefined, name: string | undefined): boolean =>
    namespace !== undefined && newNamespaces.has(namespace) && addedWithNamespace(phase, name);
  for (const phase of options.order) {
    for (const item of options.items.filter((i) => i.groupResource === phase)) {
      const meta = (item.object.metadata ?? {}) as { namespace?: string; name?: string };
      const label = `${meta.namespace ? `${meta.namespace}/` : ''}${meta.name ?? ''}`;
      if (addedByCluster(phase, meta.namespace, meta.name)) {
        // The backed-up default ServiceAccount is merged into the one the cluster creates.
        const merged =
          phase === 'serviceaccounts' &&
          existingAction({
            existing: {
              apiVersion: 'v1',
              kind: 'ServiceAccount',
              metadata: { name: meta.name, namespace: meta.namespace },
            },
            desired: item.object,
            policy: options.policy,
            groupResource: phase,
          }).action === 'update';
        out.push(
          merged
            ? { phase, item: label, action: 'update' }
            : { phase, item: label, action: 'skip', reason: 'the cluster creates it with the namespace' },
        );
        continue;
      }
      const existing = await options.deps.cluster.read({
        resource: phase.split('.')[0] ?? phase,
        object: item.object,
      });
      if (!existing) {
        // A pod's restore hooks show on creates only: Velero runs them for pods it creates.
        out.push({ phase, item: label, action: 'create', ...hookPreview(item) });
        continue;
      }
      const decided = existingAction({
        existing,
        desired: item.object,
        policy: options.policy,
        groupResource: phase,
      });
      out.push(
        decided.action === 'update'
          ? { phase, item: label, action: 'update' }
          : { phase, item: label, action: 'skip', reason: decided.reason },
      );
    }
  }
  return out;
}

const signalOf = (deps: PlanRestoreDeps): { signal?: AbortSignal } =>
  deps.signal ? { signal: deps.signal } : {};
