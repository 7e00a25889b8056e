/**
 * RestoreVolumes' part for volumes whose data Lifeboat's data mover moved: one block-restore job
 * each (the repository manifest into a new EBS snapshot and a volume from it, in the zone the
 * plan chose, in the request's region and account, encrypted with its KMS key), handed to the
 * state machine (the RestoreVolumeData Map runs it on Fargate, or as a child process locally)
 * until it reports the job ran; then the new volume id from the job's final document. The volume
 * is written by the data mover in the target account, where this function may see nothing: it
 * is not polled, a PV may point at it while EBS still creates it.
 */
import { createHash } from 'node:crypto';
import {
  type DataMoverJob,
  type DataMoverJobOf,
  dataMoverProgress,
  type RepositoryLocation,
  type WorkLocation,
} from '../../shared/contracts/data-mover-job.js';
import type { RestoreSpec } from '../../shared/contracts/restore-request.js';
import type { RestoreRun } from '../../shared/contracts/restore-run.js';
import type { VolumePlan, VolumesProgress } from '../../shared/contracts/restore-volumes.js';
import { dataMoverWorkKeys } from '../../shared/domain/storage/keys.js';
import { isKmsKeyArn } from '../../shared/domain/volumes/ebs-volume.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';

/** Where the data mover's repository is, for restore jobs. */
export interface RestoreDataMover {
  readonly repository: RepositoryLocation;
  /** Where the jobs keep their working data when the repository is read only (a DR deployment). */
  readonly work?: WorkLocation;
  /** The region volumes are written in when the request names none (default: the data mover's). */
  readonly region?: string;
  /** At most this many jobs per call. */
  readonly batch?: number;
}

const DEFAULT_BATCH = 40;

/** The job id of one restored volume: stable across retries of the same restore run. */
export function restoreJobId(run: Pick<RestoreRun, 'name' | 'runId'>, pvName: string): string {
  const digest = createHash('sha256').update(`${run.runId}/${pvName}`).digest('hex').slice(0, 16);
  return `${run.name.slice(0, 150)}_restore_${digest}`;
}

async function finalDocument(store: ObjectStore, jobId: string, signal?: AbortSignal) {
  const raw = await store.get(dataMoverWorkKeys(jobId).progress, signal ? { signal } : {});
  if (!raw) return undefined;
  const parsed = dataMoverProgress.safeParse(JSON.parse(Buffer.from(raw).toString('utf8')));
  return parsed.success ? parsed.data : undefined;
}

/** What advanceMovedVolumes works on: the run, its plan and saved progress, and how to record lines. */
export interface MovedVolumesOptions {
  run: RestoreRun;
  spec: RestoreSpec;
  plan: VolumePlan;
  progress: VolumesProgress;
  moved?: readonly { jobId: string; error?: string }[];
  store: ObjectStore;
  dataMover?: RestoreDataMover;
  note: (level: 'info' | 'warning' | 'error', msg: string, pvName: string) => void;
  fail: (pvName: string, message: string) => void;
  signal?: AbortSignal;
}

type VolumeMoves = NonNullable<VolumesProgress['moves']>;
type NativeVolume = VolumePlan['native'][number];

/**
 * Settles the jobs the last RestoreVolumeData ran and makes the jobs of volumes not started yet;
 * returns the jobs to run now. `fail` records a volume's error (and its log line).
 */
export async function advanceMovedVolumes(options: MovedVolumesOptions): Promise<DataMoverJob[]> {
  options.progress.moves ??= {};
  const moves = options.progress.moves;
  await settleRanJobs(options, moves);
  startMovedVolumes(options, moves);
  return Object.values(moves)
    .filter((m) => m.state === 'Ready' && m.job)
    .slice(0, options.dataMover?.batch ?? DEFAULT_BATCH)
    .map((m) => m.job as DataMoverJob);
}

/** Records how each job the last RestoreVolumeData ran ended: the new volume, or why there is none. */
async function settleRanJobs(options: MovedVolumesOptions, moves: VolumeMoves): Promise<void> {
  const ran = new Map((options.moved ?? []).map((m) => [m.jobId, m]));
  for (const [pvName, move] of Object.entries(moves)) {
    const report = ran.get(move.jobId);
    if (move.state !== 'Ready' || !report) continue;
    const doc = await finalDocument(options.store, move.jobId, options.signal);
    const result = doc?.state === 'Completed' ? doc.result : undefined;
    delete move.job;
    if (result?.kind === 'block-restore' && result.volumeId) {
      Object.assign(move, {
        state: 'Completed',
        snapshotId: result.snapshotId,
        blocksWritten: result.blocksWritten,
      });
      options.progress.volumes[pvName] = { volumeId: result.volumeId, state: 'creating' };
      options.note(
        'info',
        `The data mover wrote ${result.blocksWritten} blocks into snapshot ${result.snapshotId} and created volume ${result.volumeId} from it`,
        pvName,
      );
      continue;
    }
    move.state = 'Failed';
    options.fail(
      pvName,
      doc?.error?.message ??
        (report.error
          ? `the data mover task failed (${report.error}) without recording why`
          : 'the data mover stopped without recording a result'),
    );
  }
}

/** Makes the job of each moved volume not started yet, or fails the volume when no job can write it. */
function startMovedVolumes(options: MovedVolumesOptions, moves: VolumeMoves): void {
  const { spec, progress } = options;
  const kmsKeyArn = spec.volumeKmsKeyId;
  for (const volume of options.plan.native) {
    const moved = volume.movedData;
    if (!moved || moves[volume.pvName] || progress.volumes[volume.pvName]) continue;
    if (!options.dataMover) {
      options.fail(
        volume.pvName,
        'its data is in the data mover repository, and this restore has no data mover (the repository key is not configured)',
      );
      continue;
    }
    if (kmsKeyArn && !isKmsKeyArn(kmsKeyArn)) {
      options.fail(
        volume.pvName,
        `volumeKmsKeyId ${kmsKeyArn} is not a key ARN: a volume written from the repository is encrypted through EBS StartSnapshot, which takes a key ARN`,
      );
      continue;
    }
    const job = blockRestoreJob({
      run: options.run,
      spec,
      volume,
      manifestId: moved.manifestId,
      dataMover: options.dataMover,
    });
    moves[volume.pvName] = { jobId: job.jobId, state: 'Ready', job };
    options.note(
      'info',
      `Restoring the volume from the repository (manifest ${moved.manifestId}) in ${volume.availabilityZone}${spec.volumeAccountRoleArn ? ` through ${spec.volumeAccountRoleArn}` : ''}`,
      volume.pvName,
    );
  }
}

/**
 * The block-restore job of one moved volume: in the zone the plan chose, in the request's region
 * and account, encrypted with its KMS key when it names one.
 */
function blockRestoreJob(options: {
  readonly run: RestoreRun;
  readonly spec: RestoreSpec;
  readonly volume: NativeVolume;
  /** The repository manifest of the volume's moved data. */
  readonly manifestId: string;
  readonly dataMover: RestoreDataMover;
}): DataMoverJobOf<'block-restore'> {
  const { run, spec, volume, manifestId } = options;
  const kmsKeyArn = spec.volumeKmsKeyId;
  const region = spec.volumeRegion ?? options.dataMover.region;
  return {
    kind: 'block-restore',
    jobId: restoreJobId(run, volume.pvName),
    repository: options.dataMover.repository,
    ...(options.dataMover.work ? { work: options.dataMover.work } : {}),
    manifestId,
    tags: {
      restore: run.name,
      ...(volume.pvcName ? { pvcNamespace: volume.pvcNamespace ?? '', pvcName: volume.pvcName } : {}),
    },
    target: {
      ...(region ? { region } : {}),
      ...(spec.volumeAccountRoleArn ? { roleArn: spec.volumeAccountRoleArn } : {}),
      ...(spec.volumeAccountExternalId ? { externalId: spec.volumeAccountExternalId } : {}),
      ...(kmsKeyArn ? { kmsKeyArn, encrypted: true } : {}),
      description: `Lifeboat restore ${run.name}: PV ${volume.pvName} from manifest ${manifestId}`.slice(
        0,
        255,
      ),
      volume: {
        availabilityZone: volume.availabilityZone,
        volumeType: volumeTypeOf(volume.volumeType),
        ...(volume.iops ? { iops: volume.iops } : {}),
      },
    },
  };
}

const VOLUME_TYPES = ['gp2', 'gp3', 'io1', 'io2', 'st1', 'sc1', 'standard'] as const;

/** The recorded EBS volume type, or gp3 when it is not one EBS creates. */
function volumeTypeOf(recorded: string): (typeof VOLUME_TYPES)[number] {
  return (VOLUME_TYPES as readonly string[]).includes(recorded)
    ? (recorded as (typeof VOLUME_TYPES)[number])
    : 'gp3';
}
