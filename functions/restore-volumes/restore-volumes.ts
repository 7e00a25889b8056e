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
import { type RestoreSpec, restoreRequest } from '../../shared/contracts/restore-request.js';
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
import type { Snapshotter, SnapshotterAt, VolumePlace } from '../../shared/ports/snapshotter.js';
import { advanceMovedVolumes, type RestoreDataMover } from './moved-volumes.js';

export interface RestoreVolumesDeps {
  readonly store: ObjectStore;
  /** EC2; without one, every planned volume is an error of the restore. */
  readonly snapshotter?: Snapshotter;
  /**
   * EC2 where the request sends the volumes (volumeRegion, volumeAccountRoleArn): the volumes
   * are created, tagged and waited for there. Unset, such volumes are errors of the restore.
   */
  readonly snapshotterAt?: SnapshotterAt;
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
  const call = await loadVolumesCall(input.run, deps);
  if (!call) return { done: true, pending: 0, waitSeconds: 0 };
  const natives = call.plan.native.filter((v) => !v.movedData);
  const moveJobs = await advanceMovedVolumes({
    run: call.run,
    spec: call.spec,
    plan: call.plan,
    progress: call.progress,
    ...(input.moved ? { moved: input.moved } : {}),
    store: deps.store,
    ...(deps.dataMover ? { dataMover: deps.dataMover } : {}),
    note: call.note,
    fail: call.fail,
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  await createNativeVolumes(call, natives);
  await call.save();
  // The data mover's jobs run first; the native volumes are created meanwhile.
  if (moveJobs.length > 0)
    return { done: false, pending: readyMoves(call.progress), waitSeconds: 0, moveJobs };

  await pollNewVolumes(call, natives);
  const waiting = unsettled(call, natives);
  if (waiting.length > 0 && deps.clock.now().getTime() < call.deadline) {
    await call.save();
    return { done: false, pending: waiting.length, waitSeconds: VOLUME_WAIT_SECONDS };
  }
  for (const pvName of waiting)
    call.fail(
      pvName,
      `its volume was not available within itemOperationTimeout (${formatDuration(call.timeoutMs)})`,
    );
  await finishVolumes(call);
  return { done: true, pending: 0, waitSeconds: 0 };
}

type NativeVolume = VolumePlan['native'][number];

/** One call's view of the restore's volumes: what was planned, how far it got, how to record it. */
interface VolumesCall {
  readonly run: RestoreRun;
  readonly spec: RestoreSpec;
  readonly plan: VolumePlan;
  readonly progress: VolumesProgress;
  readonly deps: RestoreVolumesDeps;
  /** EC2 where the volumes land (the request's region and account, else the function's own). */
  readonly snapshotter: Snapshotter | undefined;
  /** Where that is, when it is not the function's own ('' otherwise), for messages. */
  readonly where: string;
  /** itemOperationTimeout, and when it ends (counted from the first call). */
  readonly timeoutMs: number;
  readonly deadline: number;
  readonly withSignal: { readonly signal?: AbortSignal };
  readonly note: (level: LogEvent['level'], msg: string, pvName: string) => void;
  /** Records a volume's error and its log line. */
  readonly fail: (pvName: string, message: string) => void;
  /** Whether a volume ended: available, or given up on. */
  readonly settled: (pvName: string) => boolean;
  readonly save: () => Promise<void>;
}

/** Reads the plan, the saved progress and the request; undefined when there is nothing (left) to do. */
async function loadVolumesCall(run: RestoreRun, deps: RestoreVolumesDeps): Promise<VolumesCall | undefined> {
  const work = restoreWorkKeys(run);
  const rawPlan = await readJson(deps.store, work.volumes);
  const plan: VolumePlan | undefined = rawPlan === undefined ? undefined : volumePlan.parse(rawPlan);
  if (!plan || plan.native.length === 0) return undefined;
  const saved = await readJson(deps.store, work.volumesProgress);
  const progress: VolumesProgress =
    saved === undefined
      ? { startedAt: deps.clock.now().toISOString(), volumes: {}, done: false, log: [] }
      : volumesProgress.parse(saved);
  if (progress.done) return undefined;
  const rawRequest = await readJson(deps.store, work.request);
  if (rawRequest === undefined)
    throw new LifeboatError(`the request of restore ${run.name} is missing from the working data`);
  const spec = restoreRequest.parse(rawRequest).restore.spec;
  const timeoutText = spec.itemOperationTimeout ?? DEFAULT_ITEM_OPERATION_TIMEOUT;
  const timeoutMs = parseDuration(timeoutText) ?? (parseDuration(DEFAULT_ITEM_OPERATION_TIMEOUT) as number);
  return volumesCall({ run, spec, plan, progress, deps, timeoutMs, progressKey: work.volumesProgress });
}

/** How one call records what happens to each volume, into the progress it saves. */
function volumesCall(
  state: Pick<VolumesCall, 'run' | 'spec' | 'plan' | 'progress' | 'deps' | 'timeoutMs'> & {
    readonly progressKey: string;
  },
): VolumesCall {
  const { run, progress, deps } = state;
  const note = (level: LogEvent['level'], msg: string, pvName: string): void => {
    progress.log.push({
      time: deps.clock.now().toISOString(),
      level,
      msg,
      fields: { restore: run.name, resource: 'persistentvolumes', name: pvName },
    });
  };
  return {
    run,
    spec: state.spec,
    plan: state.plan,
    progress,
    deps,
    ...volumePlaceOf(state.spec, deps),
    timeoutMs: state.timeoutMs,
    deadline: Date.parse(progress.startedAt) + state.timeoutMs,
    withSignal: deps.signal ? { signal: deps.signal } : {},
    note,
    fail: (pvName, message) => {
      progress.volumes[pvName] = { ...progress.volumes[pvName], error: message };
      note('error', `Could not restore persistent volume ${pvName} from its snapshot: ${message}`, pvName);
    },
    settled: (pvName) => {
      const v = progress.volumes[pvName];
      return v?.error !== undefined || v?.state === 'available';
    },
    save: () =>
      deps.store.put(state.progressKey, JSON.stringify(progress), { contentType: 'application/json' }),
  };
}

/**
 * EC2 where the request sends the restored volumes: in its volumeRegion, through its
 * volumeAccountRoleArn (with volumeAccountExternalId); the function's own EC2 otherwise.
 */
function volumePlaceOf(
  spec: RestoreSpec,
  deps: RestoreVolumesDeps,
): { snapshotter: Snapshotter | undefined; where: string } {
  const place: VolumePlace = {
    ...(spec.volumeRegion ? { region: spec.volumeRegion } : {}),
    ...(spec.volumeAccountRoleArn ? { roleArn: spec.volumeAccountRoleArn } : {}),
    ...(spec.volumeAccountExternalId ? { externalId: spec.volumeAccountExternalId } : {}),
  };
  if (!place.region && !place.roleArn) return { snapshotter: deps.snapshotter, where: '' };
  const where = [
    place.region ? `region ${place.region}` : '',
    place.roleArn ? `through ${place.roleArn}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  return { snapshotter: deps.snapshotterAt?.(place), where };
}

/** Creates (or finds again) every native volume not created yet. */
async function createNativeVolumes(call: VolumesCall, natives: readonly NativeVolume[]): Promise<void> {
  const { snapshotter } = call;
  for (const volume of natives) {
    if (call.progress.volumes[volume.pvName]?.volumeId || call.settled(volume.pvName)) continue;
    if (!snapshotter) {
      call.fail(
        volume.pvName,
        call.where
          ? `this restore has no EC2 access in ${call.where} to create volumes from native snapshots there`
          : 'this restore has no EC2 access to create volumes from native snapshots',
      );
      continue;
    }
    try {
      await createNativeVolume({ call, volume, snapshotter });
    } catch (error) {
      if (error instanceof RetryableError) {
        await call.save();
        throw error;
      }
      if (!(error instanceof LifeboatError)) throw error;
      call.fail(volume.pvName, error.message);
    }
  }
}

/** Finds the volume an earlier attempt created (by its tags), or creates it from the snapshot. */
async function createNativeVolume(options: {
  readonly call: VolumesCall;
  readonly volume: NativeVolume;
  readonly snapshotter: Snapshotter;
}): Promise<void> {
  const { call, volume, snapshotter } = options;
  const { run, spec, withSignal } = call;
  const tags = [
    { key: 'velero.io/restore', value: run.name },
    { key: 'velero.io/pv', value: volume.pvName },
  ];
  const [found] = (await snapshotter.findVolumes({ tags, ...withSignal })).filter(
    (v) => v.state === 'creating' || v.state === 'available' || v.state === 'in-use',
  );
  const volumeId =
    found?.volumeId ??
    (
      await snapshotter.createVolumeFromSnapshot({
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
        clientToken: createHash('sha256').update(`${run.runId}/${volume.pvName}`).digest('hex').slice(0, 64),
        ...withSignal,
      })
    ).volumeId;
  call.progress.volumes[volume.pvName] = { volumeId, state: found?.state ?? 'creating' };
  call.note(
    'info',
    `${found ? 'Found' : 'Created'} volume ${volumeId} from snapshot ${volume.snapshotHandle} in ${volume.availabilityZone}${call.where ? ` (${call.where})` : ''}`,
    volume.pvName,
  );
}

/** How many data-mover jobs are still to run. */
function readyMoves(progress: VolumesProgress): number {
  return Object.values(progress.moves ?? {}).filter((m) => m.state === 'Ready').length;
}

/** The native volumes still being created. */
function unsettled(call: VolumesCall, natives: readonly NativeVolume[]): string[] {
  return natives.map((v) => v.pvName).filter((n) => !call.settled(n));
}

/** Waits a little for the new volumes here; longer waits are the state machine's. */
async function pollNewVolumes(call: VolumesCall, natives: readonly NativeVolume[]): Promise<void> {
  const { deps, progress } = call;
  const pollUntil = Date.now() + (deps.pollWithinMs ?? 20_000);
  for (;;) {
    for (const pvName of unsettled(call, natives)) {
      const volumeId = progress.volumes[pvName]?.volumeId ?? '';
      try {
        const status = await (call.snapshotter as Snapshotter).volumeStatus(volumeId, call.withSignal);
        progress.volumes[pvName] = { volumeId, state: status.state };
        if (status.state === 'error' || status.state === 'deleting' || status.state === 'deleted')
          call.fail(pvName, `volume ${volumeId} is ${status.state}`);
      } catch (error) {
        // Not visible yet, or throttled: asked again on the next round.
        if (!(error instanceof RetryableError)) throw error;
      }
    }
    if (unsettled(call, natives).length === 0 || Date.now() >= pollUntil || deps.signal?.aborted) break;
    await new Promise((resolve) => setTimeout(resolve, deps.pollIntervalMs ?? 2_000));
  }
}

/** Points the planned PVs at their new volumes, notes each restored one, and saves the step done. */
async function finishVolumes(call: VolumesCall): Promise<void> {
  const { progress } = call;
  await pointPersistentVolumes({ store: call.deps.store, run: call.run, progress });
  for (const volume of call.plan.native) {
    const v = progress.volumes[volume.pvName];
    if (v?.volumeId && !v.error)
      call.note(
        'info',
        `Restored persistent volume from ${volume.movedData ? 'the repository' : 'snapshot'}: volume ${v.volumeId}`,
        volume.pvName,
      );
  }
  progress.done = true;
  await call.save();
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
