/**
 * RestoreVolumes: before any phase, re-creates each volume PlanRestore planned from a native
 * snapshot (Velero CreateVolumeFromSnapshot), in the recorded zone or the one the request names,
 * encrypted with the request's KMS key when it names one (else as the snapshot is), tagged
 * `velero.io/restore` and `velero.io/pv` so that a retried call finds the volume its first
 * attempt created; waits until each is `available`; then points the planned PVs at their new
 * volumes (SetVolumeID), leaving out each PV whose volume could not be made (Velero: the PV is
 * an error of the restore, not restored).
 *
 * Re-entrant: one call polls for a short while, saves its progress and returns `done: false`
 * while volumes are still being created; the state machine waits and calls again, until every
 * volume settled or `itemOperationTimeout` (Velero's, 4h by default) passed since the first call.
 * No Lambda is held for the whole wait.
 *
 * Volumes whose data the data mover moved are written from its repository instead
 * (moved-volumes.ts): their jobs go back to the state machine (`moveJobs`), which runs them and
 * calls again with what ran (`moved`).
 */
import { createHash } from 'node:crypto';
import { restoreRequest } from '../../shared/contracts/restore-request.js';
import { plannedItem, type RestoreRun } from '../../shared/contracts/restore-run.js';
import {
  type VolumePlan,
  type VolumeStepResult,
  type VolumesProgress,
  volumePlan,
  volumesProgress,
} from '../../shared/contracts/restore-volumes.js';
import { LifeboatError, RetryableError } from '../../shared/domain/errors.js';
import { formatDuration, parseDuration } from '../../shared/domain/kubernetes/duration.js';
import { restoreWorkKeys } from '../../shared/domain/storage/keys.js';
import type { LogEvent } from '../../shared/domain/storage/log.js';
import { withVolumeId } from '../../shared/domain/volumes/restore-objects.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { Snapshotter } from '../../shared/ports/snapshotter.js';
import { advanceMovedVolumes, type RestoreDataMover } from './moved-volumes.js';

export interface RestoreVolumesDeps {
  readonly store: ObjectStore;
  /** EC2; without one, every planned volume is an error of the restore. */
  readonly snapshotter?: Snapshotter;
  readonly clock: Clock;
  /** The data mover's repository, for volumes restored from it; unset, those volumes fail. */
  readonly dataMover?: RestoreDataMover;
  /** How long one call polls new volumes before handing back to the state machine (20 s). */
  readonly pollWithinMs?: number;
  readonly pollIntervalMs?: number;
  readonly signal?: AbortSignal;
}

/** How long the state machine waits between calls while volumes are being created. */
const VOLUME_WAIT_SECONDS = 15;

/** Velero's default itemOperationTimeout. */
const DEFAULT_ITEM_OPERATION_TIMEOUT = '4h';

async function readJson(store: ObjectStore, key: string): Promise<unknown> {
  const raw = await store.get(key);
  return raw ? JSON.parse(Buffer.from(raw).toString('utf8')) : undefined;
}

export async function restoreVolumes(
  input: { run: RestoreRun; moved?: readonly { jobId: string; error?: string }[] },
  deps: RestoreVolumesDeps,
): Promise<VolumeStepResult> {
  const { run } = input;
  const work = restoreWorkKeys(run);
  const rawPlan = await readJson(deps.store, work.volumes);
  const plan: VolumePlan | undefined = rawPlan === undefined ? undefined : volumePlan.parse(rawPlan);
  if (!plan || plan.native.length === 0) return { done: true, pending: 0, waitSeconds: 0 };
  const saved = await readJson(deps.store, work.volumesProgress);
  const progress: VolumesProgress =
    saved === undefined
      ? { startedAt: deps.clock.now().toISOString(), volumes: {}, done: false, log: [] }
      : volumesProgress.parse(saved);
  if (progress.done) return { done: true, pending: 0, waitSeconds: 0 };
  const save = (): Promise<void> =>
    deps.store.put(work.volumesProgress, JSON.stringify(progress), { contentType: 'application/json' });
  const rawRequest = await readJson(deps.store, work.request);
  if (rawRequest === undefined)
    throw new LifeboatError(`the request of restore ${run.name} is missing from the working data`);
  const spec = restoreRequest.parse(rawRequest).restore.spec;
  const timeoutText = spec.itemOperationTimeout ?? DEFAULT_ITEM_OPERATION_TIMEOUT;
  const timeoutMs = parseDuration(timeoutText) ?? (parseDuration(DEFAULT_ITEM_OPERATION_TIMEOUT) as number);
  const deadline = Date.parse(progress.startedAt) + timeoutMs;
  const signal = deps.signal ? { signal: deps.signal } : {};
  const note = (level: LogEvent['level'], msg: string, pvName: string): void => {
    progress.log.push({
      time: deps.clock.now().toISOString(),
      level,
      msg,
      fields: { restore: run.name, resource: 'persistentvolumes', name: pvName },
    });
  };
  const fail = (pvName: string, message: string): void => {
    progress.volumes[pvName] = { ...progress.volumes[pvName], error: message };
    note('error', `Could not restore persistent volume ${pvName} from its snapshot: ${message}`, pvName);
  };
  const settled = (pvName: string): boolean => {
    const v = progress.volumes[pvName];
    return v?.error !== undefined || v?.state === 'available';
  };

  const natives = plan.native.filter((v) => !v.movedData);
  const moveJobs = await advanceMovedVolumes({
    run,
    spec,
    plan,
    progress,
    ...(input.moved ? { moved: input.moved } : {}),
    store: deps.store,
    ...(deps.dataMover ? { dataMover: deps.dataMover } : {}),
    note,
    fail,
    ...(deps.signal ? { signal: deps.signal } : {}),
  });

  // Create (or find again) every volume not created yet.
  for (const volume of natives) {
    if (progress.volumes[volume.pvName]?.volumeId || settled(volume.pvName)) continue;
    if (!deps.snapshotter) {
      fail(volume.pvName, 'this restore has no EC2 access to create volumes from native snapshots');
      continue;
    }
    const tags = [
      { key: 'velero.io/restore', value: run.name },
      { key: 'velero.io/pv', value: volume.pvName },
    ];
    try {
      const [found] = (await deps.snapshotter.findVolumes({ tags, ...signal })).filter(
        (v) => v.state === 'creating' || v.state === 'available' || v.state === 'in-use',
      );
      const volumeId =
        found?.volumeId ??
        (
          await deps.snapshotter.createVolumeFromSnapshot({
            snapshotId: volume.snapshotHandle,
            availabilityZone: volume.availabilityZone,
            ...(volume.volumeType ? { volumeType: volume.volumeType } : {}),
            ...(volume.iops ? { iops: volume.iops } : {}),
            // Lifeboat's volumeKmsKeyId (Velero: the location's ebsKmsKeyId); else as the snapshot is.
            ...(spec.volumeKmsKeyId ? { kmsKeyId: spec.volumeKmsKeyId } : {}),
            tags,
            // Velero's AWS_CLUSTER_NAME: the volume belongs to the cluster it is restored into.
            clusterName: run.cluster,
            // One token per restore attempt and PV: the SDK's own retries never make a second volume.
            clientToken: createHash('sha256')
              .update(`${run.runId}/${volume.pvName}`)
              .digest('hex')
              .slice(0, 64),
            ...signal,
          })
        ).volumeId;
      progress.volumes[volume.pvName] = { volumeId, state: found?.state ?? 'creating' };
      note(
        'info',
        `${found ? 'Found' : 'Created'} volume ${volumeId} from snapshot ${volume.snapshotHandle} in ${volume.availabilityZone}`,
        volume.pvName,
      );
    } catch (error) {
      if (error instanceof RetryableError) {
        await save();
        throw error;
      }
      if (!(error instanceof LifeboatError)) throw error;
      fail(volume.pvName, error.message);
    }
  }
  await save();
  const moving = (): number => Object.values(progress.moves ?? {}).filter((m) => m.state === 'Ready').length;
  // The data mover's jobs run first; the native volumes are created meanwhile.
  if (moveJobs.length > 0) return { done: false, pending: moving(), waitSeconds: 0, moveJobs };

  // Wait a little for them here; longer waits are the state machine's.
  const pollUntil = Date.now() + (deps.pollWithinMs ?? 20_000);
  const waiting = (): string[] => natives.map((v) => v.pvName).filter((n) => !settled(n));
  for (;;) {
    for (const pvName of waiting()) {
      const volumeId = progress.volumes[pvName]?.volumeId ?? '';
      try {
        const status = await (deps.snapshotter as Snapshotter).volumeStatus(volumeId, signal);
        progress.volumes[pvName] = { volumeId, state: status.state };
        if (status.state === 'error' || status.state === 'deleting' || status.state === 'deleted')
          fail(pvName, `volume ${volumeId} is ${status.state}`);
      } catch (error) {
        // Not visible yet, or throttled: asked again on the next round.
        if (!(error instanceof RetryableError)) throw error;
      }
    }
    if (waiting().length === 0 || Date.now() >= pollUntil || deps.signal?.aborted) break;
    await new Promise((resolve) => setTimeout(resolve, deps.pollIntervalMs ?? 2_000));
  }
  if (waiting().length > 0 && deps.clock.now().getTime() < deadline) {
    await save();
    return { done: false, pending: waiting().length, waitSeconds: VOLUME_WAIT_SECONDS };
  }
  for (const pvName of waiting())
    fail(pvName, `its volume was not available within itemOperationTimeout (${formatDuration(timeoutMs)})`);

  await pointPersistentVolumes({ store: deps.store, run, progress });
  for (const volume of plan.native) {
    const v = progress.volumes[volume.pvName];
    if (v?.volumeId && !v.error)
      note(
        'info',
        `Restored persistent volume from ${volume.movedData ? 'the repository' : 'snapshot'}: volume ${v.volumeId}`,
        volume.pvName,
      );
  }
  progress.done = true;
  await save();
  return { done: true, pending: 0, waitSeconds: 0 };
}

/**
 * Rewrites the persistentvolumes chunks: each planned PV pointed at its new volume, or left out
 * when its volume could not be made. Idempotent: a retry writes the same chunks.
 */
async function pointPersistentVolumes(options: {
  store: ObjectStore;
  run: RestoreRun;
  progress: VolumesProgress;
}): Promise<void> {
  const work = restoreWorkKeys(options.run);
  for (const key of await options.store.list(work.chunksDir('persistentvolumes'))) {
    const raw = await readJson(options.store, key);
    if (raw === undefined) continue;
    const items = plannedItem.array().parse(raw);
    let changed = false;
    const kept = items.flatMap((item) => {
      const name = String((item.object.metadata as { name?: unknown } | undefined)?.name ?? '');
      const volume = options.progress.volumes[name];
      if (!volume) return [item];
      changed = true;
      if (volume.error || !volume.volumeId) return [];
      return [{ ...item, object: withVolumeId(item.object, { volumeId: volume.volumeId }) }];
    });
    if (changed) await options.store.put(key, JSON.stringify(kept), { contentType: 'application/json' });
  }
}
