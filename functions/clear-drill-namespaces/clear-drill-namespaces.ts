/**
 * ClearDrillNamespaces: before a drill restores, the target namespaces an earlier drill made
 * (shared/domain/drills/target-namespaces) are deleted, and looked at again until they are gone,
 * so the restore creates every item afresh and the checks never count last week's objects as
 * restored. A namespace no drill made is never deleted. One look per call: the workflow's Wait
 * state waits between looks, until the drill's deadline, when the drill fails naming what is
 * still there. Re-entrant: deleting a namespace already being deleted is a look at it.
 */
import type { DrillRun } from '../../shared/contracts/drill.js';
import { expectedItems } from '../../shared/domain/drills/expected-items.js';
import {
  drillTargetNamespaces,
  namespaceClearing,
  RESTORE_NAME_LABEL,
  restoresThatMade,
  type SeenNamespace,
} from '../../shared/domain/drills/target-namespaces.js';
import { drillKeys } from '../../shared/domain/storage/keys.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ClusterWriter } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { drilledResourceList } from '../common/drill-records.js';

export interface ClearDrillNamespacesDeps {
  readonly store: ObjectStore;
  readonly clock: Clock;
  readonly clusterNamed: (name: string) => Promise<ClusterWriter>;
  readonly signal?: AbortSignal;
}

/** What one look found: small, for the state machine's Choice. */
export interface DrillNamespacesClearing {
  /** Nothing an earlier drill made is left: the restore may start. */
  readonly cleared: boolean;
  /** The deadline passed before they were gone: the drill fails with `reason`. */
  readonly expired: boolean;
  readonly deleted: number;
  readonly deleting: number;
  readonly kept: number;
  readonly reason?: string;
}

const namespaceStub = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

async function seeNamespace(options: {
  cluster: ClusterWriter;
  name: string;
  signal?: AbortSignal;
}): Promise<SeenNamespace> {
  const { name } = options;
  const live = await options.cluster.read({
    resource: 'namespaces',
    object: namespaceStub(name),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const metadata = (live?.metadata ?? {}) as {
    deletionTimestamp?: unknown;
    labels?: Record<string, unknown>;
  };
  const restoreName = metadata.labels?.[RESTORE_NAME_LABEL];
  return {
    name,
    exists: live !== undefined,
    terminating: live !== undefined && Boolean(metadata.deletionTimestamp),
    ...(typeof restoreName === 'string' && restoreName ? { restoreName } : {}),
  };
}

export async function clearDrillNamespaces(
  input: { run: DrillRun },
  deps: ClearDrillNamespacesDeps,
): Promise<DrillNamespacesClearing> {
  const { run } = input;
  const signal = deps.signal ? { signal: deps.signal } : {};
  const resourceList = await drilledResourceList(deps.store, run, deps.signal);
  // Without a resource list the drill cannot know its namespaces; CheckDrillItems reports it.
  const targets = drillTargetNamespaces(
    expectedItems({ resourceList: resourceList ?? {}, namespaceMapping: run.namespaceMapping }),
  );
  const cluster = await deps.clusterNamed(run.cluster);
  const seen: SeenNamespace[] = [];
  for (const name of targets) seen.push(await seeNamespace({ cluster, name, ...signal }));
  const drills = new Set<string>();
  for (const restore of restoresThatMade(seen))
    if (await deps.store.exists(drillKeys({ name: restore }).report, signal)) drills.add(restore);
  const clearing = namespaceClearing({ seen, drill: run.name, drills });
  for (const name of clearing.toDelete)
    await cluster.delete({ resource: 'namespaces', object: namespaceStub(name), ...signal });
  const left = [...clearing.toDelete, ...clearing.deleting];
  const expired = left.length > 0 && deps.clock.now().getTime() > Date.parse(run.readyDeadline);
  return {
    cleared: left.length === 0,
    expired,
    deleted: clearing.toDelete.length,
    deleting: clearing.deleting.length,
    kept: clearing.kept.length,
    ...(expired
      ? {
          reason: `namespace${left.length > 1 ? 's' : ''} ${left.join(', ')} of an earlier drill ${left.length > 1 ? 'were' : 'was'} still being deleted at the drill's deadline (readyTimeout)`,
        }
      : {}),
  };
}
