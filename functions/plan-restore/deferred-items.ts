/**
 * What PlanRestore plans once the archive has been read, because it depends on all of it: the
 * held PVs and PVCs as the volume plan decided them (and the objects it makes), the CRDs of the
 * custom resources restored, and the namespaces of the items restored, each in the earliest step
 * that needs it. Writes the volume plan; creates nothing in the cluster.
 */
import type { VolumePlan } from '../../shared/contracts/restore-volumes.js';
import { shouldInclude } from '../../shared/domain/kubernetes/includes-excludes.js';
import { prepareForRestore } from '../../shared/domain/restore/item.js';
import { restoreWorkKeys } from '../../shared/domain/storage/keys.js';
import { itemKey } from './plan-recipe.js';
import { CRDS, type Planning } from './planning.js';

/** The volume plan's items, each in its own step (a PV in its claim's); the plan written. */
export async function addVolumes(planning: Planning): Promise<VolumePlan> {
  const { run, recipe, firstStep, chunks } = planning;
  const { volumeSteps } = planning.found;
  const volumePlan = await planning.volumes.finish();
  // Without a spread: a backup may hold more volumes than a call takes arguments.
  const firstVolumeStep =
    volumeSteps.size > 0 ? [...volumeSteps.values()].reduce((a, b) => Math.min(a, b)) : firstStep;
  const volumeStep = (item: { groupResource: string; sourceNamespace: string; object: unknown }): number =>
    volumeStepOf({ item, steps: volumeSteps }) ?? (recipe ? firstVolumeStep : firstStep);
  for (const item of volumePlan.items) chunks.add(planning.planItem(item), volumeStep(item));
  // Made by the restore, not backed up: prepared without the resource modifiers; with the first
  // volumes, which they come before.
  for (const item of volumePlan.generated)
    chunks.add(
      {
        groupResource: item.groupResource,
        sourceNamespace: item.sourceNamespace,
        object: prepareForRestore(item.object, {
          ...planning.prepareOptions,
          groupResource: item.groupResource,
        }),
      },
      recipe ? firstVolumeStep : firstStep,
    );
  const { plan } = volumePlan;
  if (
    !run.dryRun &&
    (plan.native.length > 0 ||
      plan.provisioned.length > 0 ||
      plan.log.length > 0 ||
      plan.restoreInfos.length > 0)
  )
    await planning.deps.store.put(restoreWorkKeys(run).volumes, JSON.stringify(plan), {
      contentType: 'application/json',
    });
  await chunks.flush();
  return plan;
}

/**
 * CRDs: those the backup holds for the custom resources being restored (or all, when cluster
 * resources are restored and CRDs are not excluded). A recipe restores a CRD in a step whose
 * group takes it, or with the first of its resources.
 */
export function addCrds(planning: Planning): void {
  const { selection, recipe, firstStep } = planning;
  const takesCrds =
    selection.clusterScopedAllowed && shouldInclude(selection.resources, CRDS) && !selection.wantedItems;
  for (const [name, item] of planning.found.crdCandidates) {
    if (selection.resources.excludes.includes(CRDS)) continue;
    const direct = takesCrds ? (recipe ? recipe.stepOf(itemKey(CRDS, '', name)) : firstStep) : undefined;
    const forResources = planning.found.customResourcesSelected.get(name);
    const steps = [direct, forResources].filter((n): n is number => n !== undefined);
    if (steps.length > 0) planning.chunks.add(item, Math.min(...steps));
  }
}

/**
 * Namespaces of restored items: from the backup, or plain ones (mapped names), each in the
 * first step restoring something in it.
 */
export function addNamespaces(planning: Planning): void {
  const { run, spec, found } = planning;
  for (const [source, step] of found.namespacesNeeded) {
    const target = spec.namespaceMapping?.[source] ?? source;
    planning.chunks.add(
      found.namespaceObjects.get(source) ?? {
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
