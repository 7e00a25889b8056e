/**
 * PatchProvisionedVolumes: after the phases, gives each PV the restore had re-provisioned its
 * backed-up reclaim policy and labels once its PVC is bound (Velero's restore finalizer,
 * patchDynamicPVWithVolumeInfo). Only PVCs this restore created are touched. A PVC still
 * Pending with a WaitForFirstConsumer storage class is left alone, as Velero does.
 *
 * Bounded and re-entrant: one call polls for a short while, saves its progress and returns
 * `done: false` while PVCs are unbound; the state machine waits and calls again. A PVC not bound
 * within the bind timeout (Velero's resource timeout, 10 minutes) is given up on with a warning:
 * a cluster without a provisioner never binds it, and the restore must not hang on it.
 */

import type { RestoreRun } from '../../shared/contracts/restore-run.js';
import {
  type ProvisionedProgress,
  provisionedProgress,
  type VolumeStepResult,
  volumePlan,
} from '../../shared/contracts/restore-volumes.js';
import type { LogEvent } from '../../shared/domain/backup-log.js';
import { formatDuration } from '../../shared/domain/duration.js';
import { LifeboatError, RetryableError } from '../../shared/domain/errors.js';
import { provisionedVolumePatch } from '../../shared/domain/restore-volumes-objects.js';
import { restoreWorkKeys } from '../../shared/domain/storage-keys.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ClusterWriter } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';

export interface PatchProvisionedVolumesDeps {
  readonly store: ObjectStore;
  readonly cluster: ClusterWriter;
  readonly clock: Clock;
  /** How long a PVC may stay unbound before it is given up on (Velero's resource timeout, 10 min). */
  readonly bindTimeoutMs?: number;
  /** How long one call polls before handing back to the state machine (20 s). */
  readonly pollWithinMs?: number;
  readonly pollIntervalMs?: number;
  readonly signal?: AbortSignal;
}

const DEFAULT_BIND_TIMEOUT_MS = 10 * 60_000;
/** Velero polls a PVC's binding every 10 s. */
const BIND_WAIT_SECONDS = 10;

type Json = Record<string, unknown>;
const record = (v: unknown): Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};

async function readJson(store: ObjectStore, key: string): Promise<unknown> {
  const raw = await store.get(key);
  return raw ? JSON.parse(Buffer.from(raw).toString('utf8')) : undefined;
}

/** What one look at a PVC and its PV found. */
type Look =
  | { readonly settled: false }
  | { readonly settled: true; readonly level?: LogEvent['level']; readonly message?: string };

export async function patchProvisionedVolumes(
  input: { run: RestoreRun },
  deps: PatchProvisionedVolumesDeps,
): Promise<VolumeStepResult> {
  const { run } = input;
  const work = restoreWorkKeys(run);
  const rawPlan = await readJson(deps.store, work.volumes);
  const provisioned = rawPlan === undefined ? [] : volumePlan.parse(rawPlan).provisioned;
  if (provisioned.length === 0) return { done: true, pending: 0, waitSeconds: 0 };
  const saved = await readJson(deps.store, work.provisionedProgress);
  const progress: ProvisionedProgress =
    saved === undefined
      ? { startedAt: deps.clock.now().toISOString(), settled: [], done: false, log: [] }
      : provisionedProgress.parse(saved);
  if (progress.done) return { done: true, pending: 0, waitSeconds: 0 };
  const deadline = Date.parse(progress.startedAt) + (deps.bindTimeoutMs ?? DEFAULT_BIND_TIMEOUT_MS);
  const keyOf = (p: { pvcNamespace: string; pvcName: string }): string => `${p.pvcNamespace}/${p.pvcName}`;
  const settle = (
    p: { pvcNamespace: string; pvcName: string },
    level?: LogEvent['level'],
    msg?: string,
  ): void => {
    progress.settled.push(keyOf(p));
    if (level && msg)
      progress.log.push({
        time: deps.clock.now().toISOString(),
        level,
        msg,
        fields: {
          restore: run.name,
          resource: 'persistentvolumeclaims',
          namespace: p.pvcNamespace,
          name: p.pvcName,
        },
      });
  };
  const waiting = () => provisioned.filter((p) => !progress.settled.includes(keyOf(p)));
  const pollUntil = Date.now() + (deps.pollWithinMs ?? 20_000);
  for (;;) {
    for (const volume of waiting()) {
      try {
        const look = await lookAt({ volume, run, deps });
        if (look.settled) settle(volume, look.level, look.message);
      } catch (error) {
        // Throttled or unreachable: looked at again. Refused: Velero's error for this PV.
        if (error instanceof RetryableError) continue;
        if (!(error instanceof LifeboatError)) throw error;
        settle(volume, 'error', `Could not patch the re-provisioned PV: ${error.message}`);
      }
    }
    if (waiting().length === 0 || Date.now() >= pollUntil || deps.signal?.aborted) break;
    await new Promise((resolve) => setTimeout(resolve, deps.pollIntervalMs ?? 2_000));
  }
  const pending = waiting();
  if (pending.length > 0 && deps.clock.now().getTime() < deadline) {
    await deps.store.put(work.provisionedProgress, JSON.stringify(progress), {
      contentType: 'application/json',
    });
    return { done: false, pending: pending.length, waitSeconds: BIND_WAIT_SECONDS };
  }
  const timeout = formatDuration(deps.bindTimeoutMs ?? DEFAULT_BIND_TIMEOUT_MS);
  for (const volume of pending)
    settle(
      volume,
      'warning',
      `The PVC was not bound within ${timeout}: its re-provisioned PV did not get the backed-up reclaim policy and labels`,
    );
  progress.done = true;
  await deps.store.put(work.provisionedProgress, JSON.stringify(progress), {
    contentType: 'application/json',
  });
  return { done: true, pending: 0, waitSeconds: 0 };
}

async function lookAt(options: {
  volume: {
    pvcNamespace: string;
    pvcName: string;
    pvInfo: { reclaimPolicy: string; labels: Record<string, string> | null };
  };
  run: RestoreRun;
  deps: PatchProvisionedVolumesDeps;
}): Promise<Look> {
  const { volume, run, deps } = options;
  const signal = deps.signal ? { signal: deps.signal } : {};
  const pvc = await deps.cluster.read({
    resource: 'persistentvolumeclaims',
    object: {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { namespace: volume.pvcNamespace, name: volume.pvcName },
    },
    ...signal,
  });
  // Velero patches only PVCs its restore restored.
  if (!pvc || record(record(pvc.metadata).labels)['velero.io/restore-name'] !== run.name)
    return { settled: true };
  const spec = record(pvc.spec);
  const phase = record(pvc.status).phase;
  if (phase === 'Pending' && typeof spec.storageClassName === 'string' && spec.storageClassName) {
    const storageClass = await deps.cluster.read({
      resource: 'storageclasses',
      object: {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name: spec.storageClassName },
      },
      ...signal,
    });
    if (storageClass?.volumeBindingMode === 'WaitForFirstConsumer')
      return {
        settled: true,
        level: 'warning',
        message: `Skipping the PV patch that restores the backed-up reclaim policy and labels: StorageClass ${spec.storageClassName} binds on first consumer and the PVC is pending`,
      };
  }
  const pvName = typeof spec.volumeName === 'string' ? spec.volumeName : '';
  if (phase !== 'Bound' || !pvName) return { settled: false };
  const pv = await deps.cluster.read({
    resource: 'persistentvolumes',
    object: { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: pvName } },
    ...signal,
  });
  const claimRef = record(record(pv?.spec).claimRef);
  if (!pv || !claimRef.name || record(pv.status).phase !== 'Bound') return { settled: false };
  if (claimRef.name !== volume.pvcName || claimRef.namespace !== volume.pvcNamespace)
    return {
      settled: true,
      level: 'error',
      message: `PV ${pvName} was bound by ${String(claimRef.namespace)}/${String(claimRef.name)}, not by this PVC: it is not patched`,
    };
  const patch = provisionedVolumePatch(pv, volume.pvInfo);
  if (!patch) return { settled: true };
  await deps.cluster.mergePatch({ resource: 'persistentvolumes', object: pv, patch, ...signal });
  return {
    settled: true,
    level: 'info',
    message: `The newly provisioned PV ${pvName} got the backed-up reclaim policy and labels`,
  };
}
