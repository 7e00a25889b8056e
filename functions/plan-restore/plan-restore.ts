/**
 * PlanRestore: reads the whole backup archive first (a hostile archive fails here, before
 * anything is created), selects the items the request asks for, prepares each as Velero does,
 * and writes them in chunks per restore phase to the working data. A restore that follows a
 * recipe gets phases per group step of its workflow, each step's items only (plan-recipe.ts). A
 * dry run writes nothing and returns what would be created, updated or skipped, in order.
 */
import { readBackupArchive } from '../../shared/adapters/backup-archive-reader.js';
import { systemClock } from '../../shared/adapters/system-clock.js';
import { restoreRequest } from '../../shared/contracts/restore-request.js';
import type {
  PlannedItem,
  RestorePhase,
  RestorePlan,
  RestoreRun,
} from '../../shared/contracts/restore-run.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import { resolveResourceName } from '../../shared/domain/kubernetes/api-resources.js';
import {
  type IncludesExcludes,
  selectsAll,
  shouldInclude,
} from '../../shared/domain/kubernetes/includes-excludes.js';
import { itemSelected } from '../../shared/domain/kubernetes/label-selector.js';
import { prepareForRestore, skipReason } from '../../shared/domain/restore/item.js';
import { restorable, restorePhases } from '../../shared/domain/restore/order.js';
import { backupKeys, restoreWorkKeys } from '../../shared/domain/storage/keys.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { Cluster, ClusterWriter } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { itemPlanner } from './plan-item.js';
import { itemKey, planRecipeSteps } from './plan-recipe.js';
import { loadBackupVolumeInfos, volumePlanner } from './plan-volumes.js';
import { preview } from './preview.js';

/** As for backups (LIFEBOAT_INLINE_HOOK_LIMIT_SECONDS): what a Lambda's hook step may take. */
const DEFAULT_INLINE_HOOK_LIMIT_MS = 600_000;

export interface PlanRestoreDeps {
  readonly store: ObjectStore;
  readonly cluster: Cluster & ClusterWriter;
  readonly chunkSize?: number;
  /** A recipe hook step whose commands could run longer than this goes to the hook runner (10 min). */
  readonly inlineHookLimitMs?: number;
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

  // A recipe restore: each item's workflow step (read from the archive before planning).
  const recipe = await planRecipeSteps({
    run,
    store: deps.store,
    inlineHookLimitMs: deps.inlineHookLimitMs ?? DEFAULT_INLINE_HOOK_LIMIT_MS,
    ...signalOf(deps),
  });
  const firstStep = recipe?.firstGroupStep ?? 0;
  let notInRecipe = 0;

  // Items by step and phase, flushed in chunks so memory stays bounded by chunk size × phases.
  // Chunks are numbered per resource over the whole restore: a step's phase lists its own.
  const stepPhase = (step: number, gr: string): string => `${step}|${gr}`;
  const buffers = new Map<string, { step: number; groupResource: string; items: PlannedItem[] }>();
  const chunksWritten = new Map<string, number>();
  const stepChunks = new Map<string, number[]>();
  const counts = new Map<string, number>();
  const crdCandidates = new Map<string, PlannedItem>();
  /** Custom resources restored, each with the earliest step restoring one. */
  const customResourcesSelected = new Map<string, number>();
  const namespacesNeeded = new Map<string, number>();
  const namespaceObjects = new Map<string, PlannedItem>();
  let skipped = 0;
  const pending: { step: number; groupResource: string; chunk: PlannedItem[] }[] = [];
  const earliest = (map: Map<string, number>, key: string, step: number): void => {
    map.set(key, Math.min(map.get(key) ?? step, step));
  };
  const add = (item: PlannedItem, step = firstStep): void => {
    const key = stepPhase(step, item.groupResource);
    const buffer = buffers.get(key) ?? { step, groupResource: item.groupResource, items: [] };
    buffer.items.push(item);
    buffers.set(key, buffer);
    counts.set(key, (counts.get(key) ?? 0) + 1);
    if (buffer.items.length >= (deps.chunkSize ?? 500)) {
      pending.push({ step, groupResource: item.groupResource, chunk: buffer.items });
      buffers.set(key, { step, groupResource: item.groupResource, items: [] });
    }
  };
  // A dry run keeps its items for the preview; a real run writes chunks per resource.
  const dryRunItems: { step: number; item: PlannedItem }[] = [];
  const flush = async (): Promise<void> => {
    for (const { step, groupResource, chunk } of pending.splice(0)) {
      if (run.dryRun) {
        dryRunItems.push(...chunk.map((item) => ({ step, item })));
        continue;
      }
      const n = chunksWritten.get(groupResource) ?? 0;
      chunksWritten.set(groupResource, n + 1);
      const key = stepPhase(step, groupResource);
      stepChunks.set(key, [...(stepChunks.get(key) ?? []), n]);
      await deps.store.put(work.chunk(groupResource, n), JSON.stringify(chunk), {
        contentType: 'application/json',
      });
    }
  };
  /** Where volume items come back from the volume plan: by their backed-up identity. */
  const volumeSteps = new Map<string, number>();

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
      const step = recipe ? recipe.stepOf(itemKey(gr, entry.namespace, entry.name)) : firstStep;
      if (step === undefined) {
        notInRecipe++;
        return;
      }
      if (gr.includes('.')) earliest(customResourcesSelected, gr, step);
      if (entry.namespace) earliest(namespacesNeeded, entry.namespace, step);
      if (volumes.holds(gr)) {
        volumeSteps.set(itemKey(gr, entry.namespace, entry.name), step);
        volumes.hold({ groupResource: gr, sourceNamespace: entry.namespace, object: entry.object });
        return;
      }
      add(planItem({ groupResource: gr, sourceNamespace: entry.namespace, object: entry.object }), step);
      await flush();
    },
  });

  const volumePlan = await volumes.finish();
  // Without a spread: a backup may hold more volumes than a call takes arguments.
  const firstVolumeStep =
    volumeSteps.size > 0 ? [...volumeSteps.values()].reduce((a, b) => Math.min(a, b)) : firstStep;
  const volumeStep = (item: { groupResource: string; sourceNamespace: string; object: unknown }): number =>
    volumeStepOf({ item, steps: volumeSteps }) ?? (recipe ? firstVolumeStep : firstStep);
  for (const item of volumePlan.items) add(planItem(item), volumeStep(item));
  // Made by the restore, not backed up: prepared without the resource modifiers; with the first
  // volumes, which they come before.
  for (const item of volumePlan.generated)
    add(
      {
        groupResource: item.groupResource,
        sourceNamespace: item.sourceNamespace,
        object: prepareForRestore(item.object, { ...options, groupResource: item.groupResource }),
      },
      recipe ? firstVolumeStep : firstStep,
    );
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
  // A recipe restores a CRD in a step whose group takes it, or with the first of its resources.
  const takesCrds = clusterScopedAllowed && shouldInclude(resources, CRDS) && !wantedItems;
  for (const [name, item] of crdCandidates) {
    if (resources.excludes.includes(CRDS)) continue;
    const direct = takesCrds ? (recipe ? recipe.stepOf(itemKey(CRDS, '', name)) : firstStep) : undefined;
    const forResources = customResourcesSelected.get(name);
    const steps = [direct, forResources].filter((n): n is number => n !== undefined);
    if (steps.length > 0) add(item, Math.min(...steps));
  }
  // Namespaces of restored items: from the backup, or plain ones (mapped names), each in the
  // first step restoring something in it.
  for (const [source, step] of namespacesNeeded) {
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
      step,
    );
  }
  // A recipe's hook steps run in the namespaces this restore restores into, and only there.
  if (recipe && !run.dryRun) {
    const targets = [...namespacesNeeded.keys()].map((ns) => spec.namespaceMapping?.[ns] ?? ns).sort();
    await deps.store.put(work.recipeNamespaces, JSON.stringify(targets), { contentType: 'application/json' });
  }
  for (const buffer of buffers.values())
    if (buffer.items.length > 0)
      pending.push({ step: buffer.step, groupResource: buffer.groupResource, chunk: buffer.items });
  buffers.clear();
  await flush();

  // Each step's phases in Velero's order, numbered over the whole restore (outcome keys sort so).
  let nextPhase = 0;
  const phasesOf = (step: number): RestorePhase[] =>
    restorePhases(
      [...counts.keys()].flatMap((key) => (key.startsWith(`${step}|`) ? [key.slice(`${step}|`.length)] : [])),
    ).map((gr) => {
      // Listed, not computed in the state machine: States.ArrayRange stops at 1,000 entries.
      const chunkIndexes = stepChunks.get(stepPhase(step, gr)) ?? [];
      return {
        index: nextPhase++,
        groupResource: gr,
        chunks: chunkIndexes.length,
        items: counts.get(stepPhase(step, gr)) ?? 0,
        chunkIndexes,
      };
    });
  const steps = recipe?.steps.map((s) => {
    const phases = s.kind === 'group' ? phasesOf(s.index) : [];
    return { ...s, phases, items: phases.reduce((n, p) => n + p.items, 0) };
  });
  const plan: RestorePlan = {
    dryRun: run.dryRun,
    nativeVolumes: volumePlan.plan.native.length,
    provisionedVolumes: volumePlan.plan.provisioned.length,
    phases: steps ? [] : phasesOf(firstStep),
    totalItems: [...counts.values()].reduce((a, b) => a + b, 0),
    skipped,
    ...(steps ? { recipe: { steps, notInRecipe } } : {}),
  };
  if (!run.dryRun) return plan;
  const sequence = (steps ?? [{ index: firstStep, kind: 'group' as const, phases: plan.phases }]).map(
    (s) => ({
      ...(steps ? { step: s.index } : {}),
      order: s.phases.map((p) => p.groupResource),
      items: dryRunItems.filter((d) => d.step === s.index).map((d) => d.item),
    }),
  );
  return {
    ...plan,
    preview: await preview({ sequence, deps, policy: spec.existingResourcePolicy ?? 'none' }),
  };
}

/** The step of a volume item the volume plan returns: its own, or its claim's for a PV. */
function volumeStepOf(options: {
  item: { groupResource: string; sourceNamespace: string; object: unknown };
  steps: ReadonlyMap<string, number>;
}): number | undefined {
  const { item, steps } = options;
  const o = (item.object ?? {}) as {
    metadata?: { name?: string };
    spec?: { claimRef?: { namespace?: string; name?: string } };
  };
  const own = steps.get(itemKey(item.groupResource, item.sourceNamespace, o.metadata?.name ?? ''));
  if (own !== undefined) return own;
  const claim = o.spec?.claimRef;
  return claim?.name
    ? steps.get(itemKey('persistentvolumeclaims', claim.namespace ?? '', claim.name))
    : undefined;
}

const signalOf = (deps: PlanRestoreDeps): { signal?: AbortSignal } =>
  deps.signal ? { signal: deps.signal } : {};
