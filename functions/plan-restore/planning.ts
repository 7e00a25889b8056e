/**
 * What PlanRestore's steps share while planning one restore: the request's selection, how an
 * item is prepared, the volume and recipe planners, the chunks being written, and what the pass
 * over the archive found for the items planned after it (CRDs, namespaces, volumes). Built once
 * from the request and the target cluster's discovery; building it reads, and writes nothing.
 */
import { systemClock } from '../../shared/adapters/system-clock.js';
import type { RestoreSpec } from '../../shared/contracts/restore-request.js';
import type { PlannedItem, RestoreRun } from '../../shared/contracts/restore-run.js';
import type { RestoreItemOptions } from '../../shared/domain/restore/item.js';
import type { VolumeHome } from '../../shared/domain/volumes/snapshot-copies.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { Cluster, ClusterWriter } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { PhaseChunks } from './phase-chunks.js';
import { itemPlanner, type PlanItem } from './plan-item.js';
import { planRecipeSteps, type RecipeRestorePlan } from './plan-recipe.js';
import { loadBackupVolumeInfos, type VolumePlanner, volumePlanner } from './plan-volumes.js';
import { type RestoreSelection, restoreSelection } from './selection.js';

/** As for backups (LIFEBOAT_INLINE_HOOK_LIMIT_SECONDS): what a Lambda's hook step may take. */
const DEFAULT_INLINE_HOOK_LIMIT_MS = 600_000;

export const CRDS = 'customresourcedefinitions.apiextensions.k8s.io';

export interface PlanRestoreDeps {
  readonly store: ObjectStore;
  readonly cluster: Cluster & ClusterWriter;
  readonly chunkSize?: number;
  /** A recipe hook step whose commands could run longer than this goes to the hook runner (10 min). */
  readonly inlineHookLimitMs?: number;
  /** Times the volume plan's log lines (the system clock unless set). */
  readonly clock?: Clock;
  readonly signal?: AbortSignal;
  /**
   * Where this deployment makes volumes when that is never where the backups were made: a DR
   * deployment's own account and region. Set, every restore's volumes land elsewhere (from
   * snapshot copies there), unless the request names another region or account.
   */
  readonly volumeHome?: VolumeHome;
}

/** What the pass over the archive found besides the items it planned at once. */
export interface ArchiveFindings {
  /** The backup's CRDs by name: restored only for what the restore restores. */
  readonly crdCandidates: Map<string, PlannedItem>;
  /** Custom resources restored, each with the earliest step restoring one. */
  readonly customResourcesSelected: Map<string, number>;
  /** Namespaces of restored items, each with the earliest step restoring something in it. */
  readonly namespacesNeeded: Map<string, number>;
  /** The backup's own namespace objects, by name. */
  readonly namespaceObjects: Map<string, PlannedItem>;
  /** Where volume items come back from the volume plan: by their backed-up identity. */
  readonly volumeSteps: Map<string, number>;
  /** Items placed where their archive path says, against their metadata: by path, the warning. */
  readonly placementWarnings: Map<string, string>;
  skipped: number;
  /**
   * Items the restore's filters select that Velero never restores (completed pods and jobs,
   * mirror pods), with Velero's log line for each: logged and shown by a dry run.
   */
  readonly notRestored: { groupResource: string; namespace: string; name: string; notice: string }[];
  notInRecipe: number;
  /** What the backup holds, for the request's parts that match nothing (unmatched.ts). */
  readonly backupNamespaces: Set<string>;
  readonly backedUpItems: Set<string>;
}

export interface Planning {
  readonly run: RestoreRun;
  readonly spec: RestoreSpec;
  readonly deps: PlanRestoreDeps;
  readonly selection: RestoreSelection;
  /** Preparation without the resource modifiers, for what the restore makes itself. */
  readonly prepareOptions: Omit<RestoreItemOptions, 'groupResource'>;
  /** Preparation with resource modifiers and restoreStatus (Velero restoreItem's order). */
  readonly planItem: PlanItem;
  /** PVs and PVCs wait for the volume decisions when the backup has volumes-info. */
  readonly volumes: VolumePlanner;
  /** A recipe restore: each item's workflow step (read from the archive before planning). */
  readonly recipe: RecipeRestorePlan | undefined;
  readonly firstStep: number;
  readonly chunks: PhaseChunks;
  readonly found: ArchiveFindings;
}

export async function startPlanning(options: {
  run: RestoreRun;
  spec: RestoreSpec;
  deps: PlanRestoreDeps;
}): Promise<Planning> {
  const { run, spec, deps } = options;
  const discovered = (await deps.cluster.discover({ ...signalOf(deps) })).resources;
  const selection = restoreSelection({ spec, discovered });
  const placementWarnings = new Map<string, string>();
  const planItem = await itemPlanner({
    run,
    spec,
    store: deps.store,
    resolve: selection.resolve,
    warningsOf: (key) => placementWarnings.get(key),
  });
  const volumes = volumePlanner({
    run,
    spec,
    infos: await loadBackupVolumeInfos({ store: deps.store, backupName: run.backupName, ...signalOf(deps) }),
    cluster: deps.cluster,
    now: () => (deps.clock ?? systemClock).now(),
    ...(deps.volumeHome ? { deploymentHome: deps.volumeHome } : {}),
    ...signalOf(deps),
  });
  const recipe = await planRecipeSteps({
    run,
    store: deps.store,
    inlineHookLimitMs: deps.inlineHookLimitMs ?? DEFAULT_INLINE_HOOK_LIMIT_MS,
    ...signalOf(deps),
  });
  return {
    run,
    spec,
    deps,
    selection,
    prepareOptions: {
      backupName: run.backupName,
      restoreName: run.name,
      ...(spec.namespaceMapping ? { namespaceMapping: spec.namespaceMapping } : {}),
      ...(spec.preserveNodePorts ? { preserveNodePorts: true } : {}),
    },
    planItem,
    volumes,
    recipe,
    firstStep: recipe?.firstGroupStep ?? 0,
    chunks: new PhaseChunks({
      run,
      store: deps.store,
      ...(deps.chunkSize !== undefined ? { chunkSize: deps.chunkSize } : {}),
    }),
    found: emptyFindings(placementWarnings),
  };
}

function emptyFindings(placementWarnings: Map<string, string>): ArchiveFindings {
  return {
    crdCandidates: new Map(),
    customResourcesSelected: new Map(),
    namespacesNeeded: new Map(),
    namespaceObjects: new Map(),
    volumeSteps: new Map(),
    placementWarnings,
    skipped: 0,
    notRestored: [],
    notInRecipe: 0,
    backupNamespaces: new Set(),
    backedUpItems: new Set(),
  };
}

export const signalOf = (deps: PlanRestoreDeps): { signal?: AbortSignal } =>
  deps.signal ? { signal: deps.signal } : {};
