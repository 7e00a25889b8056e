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
 *
 * A volume whose files the data mover backed up (fs-backup) gets them back once its PVC is bound
 * (Velero's pod volume restore): a file-restore job into the new volume's directory, handed to the
 * state machine (`moveJobs`) until it reports the job ran (`moved`). Only where the data mover can
 * reach that directory: a local or hostPath PV under `lifeboat --local`; elsewhere a warning says
 * the volume stays empty.
 */

import type { RestoreRun } from '../../shared/contracts/restore-run.js';
import {
  type ProvisionedProgress,
  provisionedProgress,
  type VolumePlan,
  type VolumeStepResult,
  volumePlan,
} from '../../shared/contracts/restore-volumes.js';
import { LifeboatError, RetryableError } from '../../shared/domain/errors.js';
import { formatDuration } from '../../shared/domain/kubernetes/duration.js';
import { restoreWorkKeys } from '../../shared/domain/storage/keys.js';
import type { LogEvent } from '../../shared/domain/storage/log.js';
import { provisionedVolumePatch } from '../../shared/domain/volumes/restore-objects.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ClusterWriter } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { FileAccess } from '../backup-item-block/volumes.js';
import type { RestoreDataMover } from '../restore-volumes/moved-volumes.js';
import { type FileRestores, fileRestores } from './file-restores.js';

export interface PatchProvisionedVolumesDeps {
  readonly store: ObjectStore;
  readonly cluster: ClusterWriter;
  readonly clock: Clock;
  /** How long a PVC may stay unbound before it is given up on (Velero's resource timeout, 10 min). */
  readonly bindTimeoutMs?: number;
  /** How long one call polls before handing back to the state machine (20 s). */
  readonly pollWithinMs?: number;
  readonly pollIntervalMs?: number;
  /** The data mover's repository, for file restores; unset, such volumes stay empty, warned. */
  readonly dataMover?: RestoreDataMover;
  /** `local-paths`: the data mover reads and writes local PVs' directories on this machine. */
  readonly fileAccess?: FileAccess;
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

/** What one look at a PVC and its PV found (and, once bound, the PV). */
type Look =
  | { readonly settled: false }
  | {
      readonly settled: true;
      readonly level?: LogEvent['level'];
      readonly message?: string;
      readonly pv?: Json;
    };

export async function patchProvisionedVolumes(
  input: { run: RestoreRun; moved?: readonly { jobId: string; error?: string }[] },
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
  const claims: Claims = { run, deps, provisioned, progress };
  const files = fileRestoresOf(claims, input.moved);
  await files.settle();
  const deadline = Date.parse(progress.startedAt) + (deps.bindTimeoutMs ?? DEFAULT_BIND_TIMEOUT_MS);
  await pollClaims(claims, files);
  const pending = unsettledClaims(claims);
  const moveJobs = files.ready();
  const save = (): Promise<void> =>
    deps.store.put(work.provisionedProgress, JSON.stringify(progress), { contentType: 'application/json' });
  if (moveJobs.length > 0) {
    await save();
    return { done: false, pending: pending.length + moveJobs.length, waitSeconds: 0, moveJobs };
  }
  if (pending.length > 0 && deps.clock.now().getTime() < deadline) {
    await save();
    return { done: false, pending: pending.length, waitSeconds: BIND_WAIT_SECONDS };
  }
  const timeout = formatDuration(deps.bindTimeoutMs ?? DEFAULT_BIND_TIMEOUT_MS);
  for (const volume of pending)
    settleClaim(claims, {
      volume,
      level: 'warning',
      message: `The PVC was not bound within ${timeout}: its re-provisioned PV did not get the backed-up reclaim policy and labels`,
    });
  progress.done = true;
  await save();
  return { done: true, pending: 0, waitSeconds: 0 };
}

type ProvisionedVolume = VolumePlan['provisioned'][number];
/** What a look at a PVC needs of its planned volume. */
type ClaimedVolume = Pick<ProvisionedVolume, 'pvcNamespace' | 'pvcName' | 'pvInfo'>;

/** The re-provisioned volumes of one call, and the progress it saves. */
interface Claims {
  readonly run: RestoreRun;
  readonly deps: PatchProvisionedVolumesDeps;
  readonly provisioned: readonly ProvisionedVolume[];
  readonly progress: ProvisionedProgress;
}

const claimKey = (p: { pvcNamespace: string; pvcName: string }): string => `${p.pvcNamespace}/${p.pvcName}`;

/** Marks a PVC settled (patched, nothing to do, or given up on), with its log line if it has one. */
function settleClaim(
  claims: Claims,
  settled: { volume: ProvisionedVolume; level?: LogEvent['level']; message?: string },
): void {
  const { volume, level, message } = settled;
  claims.progress.settled.push(claimKey(volume));
  if (level && message)
    logClaim({
      run: claims.run,
      progress: claims.progress,
      deps: claims.deps,
      namespace: volume.pvcNamespace,
      name: volume.pvcName,
      level,
      msg: message,
    });
}

function unsettledClaims(claims: Claims): ProvisionedVolume[] {
  return claims.provisioned.filter((p) => !claims.progress.settled.includes(claimKey(p)));
}

/** The call's file restores, logging about each PVC as the rest of the step does. */
function fileRestoresOf(
  claims: Claims,
  moved: readonly { jobId: string; error?: string }[] | undefined,
): FileRestores {
  const { run, deps, progress } = claims;
  return fileRestores({
    run,
    progress,
    store: deps.store,
    ...(deps.dataMover ? { dataMover: deps.dataMover } : {}),
    ...(deps.fileAccess ? { fileAccess: deps.fileAccess } : {}),
    ...(moved ? { moved } : {}),
    note: (key, level, msg) => {
      const [namespace, name] = key.split('/');
      logClaim({ run, progress, deps, namespace: namespace ?? '', name: name ?? '', level, msg });
    },
  });
}

/** Looks at each unsettled PVC for a short while; longer waits are the state machine's. */
async function pollClaims(claims: Claims, files: FileRestores): Promise<void> {
  const { deps } = claims;
  const pollUntil = Date.now() + (deps.pollWithinMs ?? 20_000);
  for (;;) {
    for (const volume of unsettledClaims(claims)) await lookAtClaim({ claims, volume, files });
    if (unsettledClaims(claims).length === 0 || Date.now() >= pollUntil || deps.signal?.aborted) break;
    await new Promise((resolve) => setTimeout(resolve, deps.pollIntervalMs ?? 2_000));
  }
}

/** One look at a PVC: settles it when it can, and starts its file restore once its PV is bound. */
async function lookAtClaim(options: {
  claims: Claims;
  volume: ProvisionedVolume;
  files: FileRestores;
}): Promise<void> {
  const { claims, volume, files } = options;
  try {
    const look = await lookAt({ volume, run: claims.run, deps: claims.deps });
    if (!look.settled) return;
    settleClaim(claims, { volume, level: look.level, message: look.message });
    if (volume.files && look.pv) files.start({ volume, pv: look.pv, manifestId: volume.files.manifestId });
  } catch (error) {
    // Throttled or unreachable: looked at again. Refused: Velero's error for this PV.
    if (error instanceof RetryableError) return;
    if (!(error instanceof LifeboatError)) throw error;
    settleClaim(claims, {
      volume,
      level: 'error',
      message: `Could not patch the re-provisioned PV: ${error.message}`,
    });
  }
}

async function lookAt(options: {
  volume: ClaimedVolume;
  run: RestoreRun;
  deps: PatchProvisionedVolumesDeps;
}): Promise<Look> {
  const { volume, run, deps } = options;
  const pvc = await deps.cluster.read({
    resource: 'persistentvolumeclaims',
    object: {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { namespace: volume.pvcNamespace, name: volume.pvcName },
    },
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  // Velero patches only PVCs its restore restored.
  if (!pvc || record(record(pvc.metadata).labels)['velero.io/restore-name'] !== run.name)
    return { settled: true };
  const spec = record(pvc.spec);
  const phase = record(pvc.status).phase;
  if (phase === 'Pending' && typeof spec.storageClassName === 'string' && spec.storageClassName) {
    const skipped = await firstConsumerLook(spec.storageClassName, deps);
    if (skipped) return skipped;
  }
  const pvName = typeof spec.volumeName === 'string' ? spec.volumeName : '';
  if (phase !== 'Bound' || !pvName) return { settled: false };
  return patchBoundVolume({ volume, pvName, deps });
}

/** Velero leaves a pending PVC whose StorageClass binds on first consumer alone. */
async function firstConsumerLook(
  storageClassName: string,
  deps: PatchProvisionedVolumesDeps,
): Promise<Look | undefined> {
  const storageClass = await deps.cluster.read({
    resource: 'storageclasses',
    object: {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: storageClassName },
    },
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  if (storageClass?.volumeBindingMode !== 'WaitForFirstConsumer') return undefined;
  return {
    settled: true,
    level: 'warning',
    message: `Skipping the PV patch that restores the backed-up reclaim policy and labels: StorageClass ${storageClassName} binds on first consumer and the PVC is pending`,
  };
}

/** Gives the PV bound to the PVC the backed-up reclaim policy and labels, once it is bound to it. */
async function patchBoundVolume(options: {
  volume: ClaimedVolume;
  pvName: string;
  deps: PatchProvisionedVolumesDeps;
}): Promise<Look> {
  const { volume, pvName, deps } = options;
  const signal = deps.signal ? { signal: deps.signal } : {};
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
  if (!patch) return { settled: true, pv };
  await deps.cluster.mergePatch({ resource: 'persistentvolumes', object: pv, patch, ...signal });
  return {
    settled: true,
    level: 'info',
    message: `The newly provisioned PV ${pvName} got the backed-up reclaim policy and labels`,
    pv,
  };
}

/** A line of the restore log about one PVC. */
function logClaim(options: {
  run: RestoreRun;
  progress: ProvisionedProgress;
  deps: PatchProvisionedVolumesDeps;
  namespace: string;
  name: string;
  level: LogEvent['level'];
  msg: string;
}): void {
  options.progress.log.push({
    time: options.deps.clock.now().toISOString(),
    level: options.level,
    msg: options.msg,
    fields: {
      restore: options.run.name,
      resource: 'persistentvolumeclaims',
      namespace: options.namespace,
      name: options.name,
    },
  });
}
