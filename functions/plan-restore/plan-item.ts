/**
 * How PlanRestore turns one backed-up object into a planned item: Velero's preparation with a
 * pod's restore init hooks (Velero's init-restore-hook action, before the modifiers), the
 * resource modifiers ValidateRestore resolved (their failures kept with the item, which is
 * restored all the same, as Velero does), the backed-up status when `restoreStatus` or the
 * object's `velero.io/restore-status` annotation asks for it, and a pod's post-restore exec hooks
 * (run by RestoreHooks once the pod is created). Reads the working data once; never reads the
 * cluster.
 */
import { resolvedResourceModifiers } from '../../shared/contracts/resource-modifiers.js';
import type { RestoreSpec } from '../../shared/contracts/restore-request.js';
import type { PlannedItem, RestorePlan, RestoreRun } from '../../shared/contracts/restore-run.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import { hookPodOf } from '../../shared/domain/hooks/backup.js';
import { type RestoreHookSpec, restoreExecHooksForPod } from '../../shared/domain/hooks/restore.js';
import type { IncludesExcludes } from '../../shared/domain/kubernetes/includes-excludes.js';
import { prepareItem, shouldRestoreStatus } from '../../shared/domain/restore/item.js';
import type { ResourceModifiers } from '../../shared/domain/restore/resource-modifiers.js';
import { restoreWorkKeys } from '../../shared/domain/storage/keys.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { itemKey } from './plan-recipe.js';

export type PlanItem = (entry: {
  groupResource: string;
  sourceNamespace: string;
  object: Record<string, unknown>;
}) => PlannedItem;

/** The rule set ValidateRestore left in the working data, if the restore names one. */
export async function loadResourceModifiers(options: {
  run: RestoreRun;
  spec: RestoreSpec;
  store: ObjectStore;
}): Promise<ResourceModifiers | undefined> {
  if (!options.spec.resourceModifier) return undefined;
  const key = restoreWorkKeys(options.run).resourceModifiers;
  const raw = await options.store.get(key);
  if (!raw)
    throw new LifeboatError(
      `the resource modifiers of restore ${options.run.name} are missing from the working data`,
    );
  return resolvedResourceModifiers.parse(JSON.parse(Buffer.from(raw).toString('utf8')));
}

export async function itemPlanner(options: {
  run: RestoreRun;
  spec: RestoreSpec;
  store: ObjectStore;
  /** Resource names as the request writes them → group resources, through discovery. */
  resolve: (names: readonly string[] | undefined) => string[];
  /** A warning found while reading the item (placed at its path), by `itemKey`. */
  warningsOf?: (key: string) => string | undefined;
}): Promise<PlanItem> {
  const { run, spec } = options;
  const resourceModifiers = await loadResourceModifiers(options);
  const restoreStatus: IncludesExcludes | undefined = spec.restoreStatus
    ? {
        includes: options.resolve(spec.restoreStatus.includedResources),
        excludes: options.resolve(spec.restoreStatus.excludedResources),
      }
    : undefined;
  const restoreHooks: readonly RestoreHookSpec[] = spec.hooks?.resources ?? [];
  const prepareOptions = {
    backupName: run.backupName,
    restoreName: run.name,
    ...(spec.namespaceMapping ? { namespaceMapping: spec.namespaceMapping } : {}),
    ...(spec.preserveNodePorts ? { preserveNodePorts: true } : {}),
    ...(resourceModifiers ? { resourceModifiers } : {}),
    restoreHooks,
  };
  return ({ groupResource, sourceNamespace, object: backedUp }) => {
    const { object, problems, initContainersAdded } = prepareItem(backedUp, {
      ...prepareOptions,
      groupResource,
    });
    const status = backedUp.status;
    const keepStatus =
      status !== undefined &&
      shouldRestoreStatus({ groupResource, object, ...(restoreStatus ? { restoreStatus } : {}) });
    const name = (backedUp.metadata as { name?: unknown } | undefined)?.name;
    const warning = options.warningsOf?.(itemKey(groupResource, sourceNamespace, String(name ?? '')));
    return {
      groupResource,
      sourceNamespace,
      object,
      ...(keepStatus ? { status } : {}),
      ...(problems.length > 0 ? { problems } : {}),
      ...(warning ? { warnings: [warning] } : {}),
      ...(initContainersAdded.length > 0 ? { initContainersAdded } : {}),
      ...(groupResource === 'pods' ? podExecHooks(object, restoreHooks) : {}),
    };
  };
}

/** Velero groups a pod's exec hooks from the object it created: mapped, modified, labelled. */
function podExecHooks(
  pod: Record<string, unknown>,
  specs: readonly RestoreHookSpec[],
): Pick<PlannedItem, 'execHooks' | 'hookWarnings'> {
  const exec = restoreExecHooksForPod({ pod: hookPodOf(pod), specs });
  return {
    ...(exec.byContainer.length > 0
      ? {
          execHooks: exec.byContainer.map((g) => ({
            container: g.container,
            hooks: g.hooks.map((h) => ({ ...h, command: [...h.command] })),
          })),
        }
      : {}),
    ...(exec.warnings.length > 0 ? { hookWarnings: exec.warnings } : {}),
  };
}

/** What a dry run shows of a pod's restore hooks: the init containers added and the exec hooks. */
export function hookPreview(
  item: PlannedItem,
): Pick<NonNullable<RestorePlan['preview']>[number], 'initContainers' | 'execHooks'> {
  const execHooks = (item.execHooks ?? []).flatMap((group) =>
    group.hooks.map((h) => ({ container: group.container, hookName: h.hookName, command: h.command })),
  );
  return {
    ...(item.initContainersAdded?.length ? { initContainers: item.initContainersAdded } : {}),
    ...(execHooks.length > 0 ? { execHooks } : {}),
  };
}
