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

import { type DataMoverJob, dataMoverProgress } from '../../shared/contracts/data-mover-job.js';
import type { RestoreRun } from '../../shared/contracts/restore-run.js';
import {
  type ProvisionedProgress,
  provisionedProgress,
  type VolumeStepResult,
  volumePlan,
} from '../../shared/contracts/restore-volumes.js';
import { LifeboatError, RetryableError } from '../../shared/domain/errors.js';
import { formatDuration } from '../../shared/domain/kubernetes/duration.js';
import { dataMoverWorkKeys, restoreWorkKeys } from '../../shared/domain/storage/keys.js';
import type { LogEvent } from '../../shared/domain/storage/log.js';
import { provisionedVolumePatch } from '../../shared/domain/volumes/restore-objects.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ClusterWriter } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { FileAccess } from '../backup-item-block/volumes.js';
import { type RestoreDataMover, restoreJobId } from '../restore-volumes/moved-volumes.js';

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
  const files = fileRestores({ run, progress, deps, ...(input.moved ? { moved: input.moved } : {}) });
  await files.settle();
  const deadline = Date.parse(progress.startedAt) + (deps.bindTimeoutMs ?? DEFAULT_BIND_TIMEOUT_MS);
  const keyOf = (p: { pvcNamespace: string; pvcName: string }): string => `${p.pvcNamespace}/${p.pvcName}`;
  const settle = (
    p: { pvcNamespace: string; pvcName: string },
    level?: LogEvent['level'],
    msg?: string,
  ): void => {
    progress.settled.push(keyOf(p));
    if (level && msg)
      logClaim({ run, progress, deps, namespace: p.pvcNamespace, name: p.pvcName, level, msg });
  };
  const waiting = () => provisioned.filter((p) => !progress.settled.includes(keyOf(p)));
  const pollUntil = Date.now() + (deps.pollWithinMs ?? 20_000);
  for (;;) {
    for (const volume of waiting()) {
      try {
        const look = await lookAt({ volume, run, deps });
        if (!look.settled) continue;
        settle(volume, look.level, look.message);
        if (volume.files && look.pv)
          files.start({ volume, pv: look.pv, manifestId: volume.files.manifestId });
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
  const moveJobs = files.ready();
  if (moveJobs.length > 0) {
    await deps.store.put(work.provisionedProgress, JSON.stringify(progress), {
      contentType: 'application/json',
    });
    return { done: false, pending: pending.length + moveJobs.length, waitSeconds: 0, moveJobs };
  }
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
/**
 * The file restores of one call: `settle` records the jobs the last RestoreFileData ran, `start`
 * makes the job of a volume whose PVC is bound (or says why it cannot), `ready` lists the jobs
 * to run now.
 */
function fileRestores(options: {
  run: RestoreRun;
  progress: ProvisionedProgress;
  deps: PatchProvisionedVolumesDeps;
  moved?: readonly { jobId: string; error?: string }[];
}): {
  settle: () => Promise<void>;
  start: (o: { volume: { pvcNamespace: string; pvcName: string }; pv: Json; manifestId: string }) => void;
  ready: () => DataMoverJob[];
} {
  const { run, progress, deps } = options;
  progress.files ??= {};
  const jobs = progress.files;
  const note = (key: string, level: LogEvent['level'], msg: string): void => {
    const [namespace, name] = key.split('/');
    logClaim({ run, progress, deps, namespace: namespace ?? '', name: name ?? '', level, msg });
  };
  return {
    settle: async () => {
      const ran = new Map((options.moved ?? []).map((m) => [m.jobId, m]));
      for (const [key, move] of Object.entries(jobs)) {
        const report = ran.get(move.jobId);
        if (move.state !== 'Ready' || !report) continue;
        delete move.job;
        const raw = await deps.store.get(dataMoverWorkKeys(move.jobId).progress);
        const parsed = raw
          ? dataMoverProgress.safeParse(JSON.parse(Buffer.from(raw).toString('utf8')))
          : undefined;
        const doc = parsed?.success ? parsed.data : undefined;
        const result = doc?.state === 'Completed' ? doc.result : undefined;
        if (result?.kind === 'file-restore') {
          move.state = 'Completed';
          note(
            key,
            'info',
            `Restored ${result.files} files, ${result.directories} directories and ${result.symlinks} symlinks (${result.bytesWritten} bytes) from the repository into the volume`,
          );
          continue;
        }
        move.state = 'Failed';
        note(
          key,
          'error',
          `Could not restore the volume's files from the repository: ${doc?.error?.message ?? (report.error ? `the data mover task failed (${report.error})` : 'the data mover stopped without recording a result')}`,
        );
      }
    },
    start: ({ volume, pv, manifestId }) => {
      const key = `${volume.pvcNamespace}/${volume.pvcName}`;
      if (jobs[key]) return;
      const spec = record(pv.spec);
      const path = String(record(spec.local).path ?? record(spec.hostPath).path ?? '');
      const reason = !deps.dataMover
        ? 'this restore has no data mover (the repository key is not configured)'
        : deps.fileAccess !== 'local-paths'
          ? 'no data mover of this restore can reach the new volume (a Fargate task mounts no pod volume; lifeboat --local restores into local and hostPath PVs)'
          : !path.startsWith('/')
            ? `the new volume is not a local or hostPath PV the data mover can write on this machine`
            : undefined;
      if (reason || !deps.dataMover) {
        note(
          key,
          'warning',
          `Its files (manifest ${manifestId}) are not restored, the volume stays empty: ${reason}`,
        );
        return;
      }
      const jobId = restoreJobId(run, `files/${key}`);
      jobs[key] = {
        jobId,
        state: 'Ready',
        job: {
          kind: 'file-restore',
          jobId,
          repository: deps.dataMover.repository,
          manifestId,
          tags: { restore: run.name, pvcNamespace: volume.pvcNamespace, pvcName: volume.pvcName },
          target: { path },
        },
      };
      note(key, 'info', `Restoring its files from the repository (manifest ${manifestId}) into ${path}`);
    },
    ready: () =>
      Object.values(jobs)
        .filter((m) => m.state === 'Ready' && m.job)
        .map((m) => m.job as DataMoverJob),
  };
}
