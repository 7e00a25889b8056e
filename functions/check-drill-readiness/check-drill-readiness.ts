/**
 * CheckDrillReadiness: one look at the workloads the drill waits on (Deployments and StatefulSets
 * available, PVCs bound), never a wait: the workflow's Wait state spaces the looks, so no Lambda
 * sleeps. Records the moment all were first ready (the end of the drill's RTO) and, once the
 * deadline has passed, what was still not ready; says which of the two the workflow should do.
 */
import pLimit from 'p-limit';
import type { DrillRun } from '../../shared/contracts/drill.js';
import { itemLabel } from '../../shared/domain/drills/expected-items.js';
import { notReadyBecause } from '../../shared/domain/drills/readiness.js';
import type { DrillMismatch } from '../../shared/domain/drills/report.js';
import { drillKeys } from '../../shared/domain/storage/keys.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { Cluster, ClusterWriter } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import {
  type DrillItemFindings,
  type DrillReadiness,
  stub,
  type WaitedOnItem,
} from '../common/drill-items.js';
import { readJson } from '../common/stored-records.js';

export interface CheckDrillReadinessDeps {
  readonly store: ObjectStore;
  readonly clock: Clock;
  readonly clusterNamed: (name: string) => Promise<Cluster & ClusterWriter>;
  readonly signal?: AbortSignal;
}

export interface ReadinessLook {
  /** Every workload is ready: the drill can finish. */
  readonly ready: boolean;
  /** The deadline has passed with some not ready: the drill finishes, failed. */
  readonly expired: boolean;
  readonly pending: number;
}

const READS = 16;

export async function checkDrillReadiness(
  input: { run: DrillRun },
  deps: CheckDrillReadinessDeps,
): Promise<ReadinessLook> {
  const { run } = input;
  const keys = drillKeys(run);
  const earlier = await readJson<DrillReadiness>(deps.store, keys.readiness);
  if (earlier?.readyAt) return { ready: true, expired: false, pending: 0 };
  const findings = await readJson<DrillItemFindings>(deps.store, keys.items);
  const pending = findings ? await notReady({ items: findings.waitOn, run, deps }) : [];
  const now = deps.clock.now();
  const expired = now.getTime() >= Date.parse(run.readyDeadline);
  if (pending.length === 0 || expired) {
    const readiness: DrillReadiness =
      pending.length === 0 ? { readyAt: now.toISOString(), pending } : { pending };
    await deps.store.put(keys.readiness, JSON.stringify(readiness), { contentType: 'application/json' });
  }
  return { ready: pending.length === 0, expired: pending.length > 0 && expired, pending: pending.length };
}

async function notReady(options: {
  items: readonly WaitedOnItem[];
  run: DrillRun;
  deps: CheckDrillReadinessDeps;
}): Promise<DrillMismatch[]> {
  const { deps } = options;
  if (options.items.length === 0) return [];
  const signal = deps.signal ? { signal: deps.signal } : {};
  const cluster = await deps.clusterNamed(options.run.cluster);
  const limit = pLimit(READS);
  const looks = await Promise.all(
    options.items.map((item) =>
      limit(async (): Promise<DrillMismatch | undefined> => {
        const live = await cluster.read({ resource: item.resource, object: stub(item), ...signal });
        const because = live
          ? notReadyBecause({ readiness: item.readiness, kind: item.kind, live })
          : 'gone from the target cluster';
        return because ? { item: itemLabel(item), problem: 'not ready', detail: because } : undefined;
      }),
    ),
  );
  return looks.filter((l): l is DrillMismatch => l !== undefined);
}
