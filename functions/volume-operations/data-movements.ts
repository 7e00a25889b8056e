/**
 * The data movements of a backup (seed 001), kept by VolumeOperations between its calls: a
 * snapshotMoveData volume's EBS snapshot copied into the repository by a block-backup job once
 * the snapshot completed, an fs-backup volume's directory by a file-backup job. Each job is made
 * incremental against the newest earlier manifest of the same volume (found by listing the
 * repository's manifest keys: their names say backup, volume and time), handed to the state
 * machine (the MoveVolumeData Map runs it on Fargate, or as a child process locally) until the
 * state machine reports it ran, then settled from the job's final progress document.
 *
 * A moved volume's EBS snapshot is kept as the base of its next incremental (ListChangedBlocks
 * needs it): once a later movement of the same volume completed, the base its parent's backup
 * kept is deleted, so a volume keeps one snapshot, not one per backup.
 * Never fails the backup: a movement that cannot start or fails is a failed volume.
 */
import * as z from 'zod';
import { readStoredJson } from '../../shared/adapters/stored-file-reader.js';
import type {
  BlockVolumes,
  DataMovement,
  HandledVolumeRecord,
  OperationStatus,
} from '../../shared/contracts/backup-volumes.js';
import {
  type DataMoverJob,
  type DataMoverProgress,
  dataMoverProgress,
  type RepositoryLocation,
} from '../../shared/contracts/data-mover-job.js';
import { LifeboatError, StoredFileUnreadable } from '../../shared/domain/errors.js';
import { dataMoverWorkKeys, repositoryKeyId, repositoryKeys } from '../../shared/domain/storage/keys.js';
import { backupFile } from '../../shared/domain/storage/stored-files.js';
import {
  movedManifestId,
  movementKeyOf,
  parentManifestOf,
  parseMovedManifestId,
  snapshotToMove,
  volumeKeyOf,
} from '../../shared/domain/volumes/data-movement.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { Snapshotter } from '../../shared/ports/snapshotter.js';

/** What VolumeOperations needs to hand volumes to the data mover. */
export interface DataMoverAccess {
  /** Where the repository is and what wraps its data key: every job's `repository`. */
  readonly repository: RepositoryLocation;
  /** The region of the backed-up volumes' snapshots (default: the data mover's own). */
  readonly region?: string;
  /** At most this many jobs are handed out per call (the state's payload stays small). */
  readonly batch?: number;
}

const DEFAULT_BATCH = 40;
const NO_DATA_MOVER =
  "this run has no data mover: the repository and its key are not configured (LIFEBOAT_REPOSITORY_KEY, or the local runtime's dataMover option)";

/** The movements the workers' records ask for, each Waiting. */
export function gatherMovements(options: {
  blocks: readonly BlockVolumes[];
  backupName: string;
  now: Date;
}): DataMovement[] {
  const created = options.now.toISOString();
  const out: DataMovement[] = [];
  for (const h of options.blocks.flatMap((b) => b.handled)) {
    const { decision } = h;
    if (
      decision.action === 'snapshot' &&
      decision.moveData &&
      h.operation &&
      !h.error &&
      decision.ebsVolumeId
    ) {
      const jobId = movedManifestId({
        backupName: options.backupName,
        volumeKey: volumeKeyOf({ ebsVolumeId: decision.ebsVolumeId }, options),
        at: h.operation.createdAt,
      });
      out.push({ key: movementKeyOf(h), jobId, mode: 'block', state: 'Waiting', created });
    } else if (decision.action === 'fs-backup' && h.files) {
      const pvName = h.pvName ?? `${h.pvcNamespace ?? ''}.${h.pvcName ?? ''}`;
      const jobId = movedManifestId({
        backupName: options.backupName,
        volumeKey: volumeKeyOf({ pvName }, options),
        at: h.startedAt ?? created,
      });
      out.push({ key: movementKeyOf(h), jobId, mode: 'file', state: 'Waiting', created });
    }
  }
  return out;
}

async function readProgress(
  store: ObjectStore,
  jobId: string,
  signal?: AbortSignal,
): Promise<DataMoverProgress | undefined> {
  const raw = await store.get(dataMoverWorkKeys(jobId).progress, signal ? { signal } : {});
  if (!raw) return undefined;
  const parsed = dataMoverProgress.safeParse(JSON.parse(Buffer.from(raw).toString('utf8')));
  return parsed.success ? parsed.data : undefined;
}

/**
 * The EBS snapshot the backup that wrote `manifestId` kept as its volume's incremental base (its
 * volumes-info's `retainedSnapshot`), if that backup is finished and kept one.
 */
async function retainedSnapshotOf(options: {
  store: ObjectStore;
  manifestId: string;
  signal?: AbortSignal;
}): Promise<string | undefined> {
  const name = parseMovedManifestId(options.manifestId);
  if (!name) return undefined;
  let infos: unknown[] | undefined;
  try {
    infos = await readStoredJson(options.store, backupFile(name.backupName, 'volumeInfo'), {
      schema: z.array(z.unknown()),
      shape: 'a list of volumes',
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (error) {
    // An unreadable volumes-info keeps its snapshot: nothing is deleted on a guess.
    if (error instanceof StoredFileUnreadable) return undefined;
    throw error;
  }
  for (const info of (infos ?? []) as ({ snapshotDataMovementInfo?: Record<string, unknown> } | null)[]) {
    const moved = info?.snapshotDataMovementInfo;
    if (moved?.snapshotHandle === options.manifestId && typeof moved.retainedSnapshot === 'string')
      return moved.retainedSnapshot || undefined;
  }
  return undefined;
}

/** Settles the movements the last MoveVolumeData ran, from their jobs' final documents. */
async function settle(options: {
  movements: DataMovement[];
  moved: readonly { jobId: string; error?: string }[];
  store: ObjectStore;
  snapshotter?: Snapshotter;
  now: Date;
  signal?: AbortSignal;
}): Promise<void> {
  const ran = new Map(options.moved.map((m) => [m.jobId, m]));
  for (const m of options.movements) {
    const report = ran.get(m.jobId);
    if (m.state !== 'Ready' || !report) continue;
    const doc = await readProgress(options.store, m.jobId, options.signal);
    const result = doc?.state === 'Completed' ? doc.result : undefined;
    const updated = doc?.updatedAt ?? options.now.toISOString();
    if (result?.kind === 'block-backup' || result?.kind === 'file-backup') {
      Object.assign(m, {
        state: 'Completed',
        ...(doc?.startedAt ? { started: doc.startedAt } : {}),
        updated,
        manifestId: result.manifestId,
        size: result.kind === 'block-backup' ? result.volumeSizeBytes : result.stats.totalBytes,
        bytesDone: doc?.bytesDone ?? result.stats.totalBytes,
        bytesRead: result.stats.bytesRead,
        storedBytes: result.stats.storedBytes,
        ...(result.kind === 'block-backup'
          ? { incremental: result.incremental, retainedSnapshot: result.snapshotId }
          : {}),
      } satisfies Partial<DataMovement>);
      delete m.job;
      if (m.supersedes && m.supersedes !== m.retainedSnapshot) await dropBase({ ...options, movement: m });
      continue;
    }
    Object.assign(m, {
      state: 'Failed',
      ...(doc?.startedAt ? { started: doc.startedAt } : {}),
      updated,
      ...(doc?.bytesDone ? { bytesDone: doc.bytesDone } : {}),
      error:
        doc?.error?.message ??
        (report.error
          ? `the data mover task failed (${report.error}) without recording why`
          : 'the data mover stopped without recording a result'),
    } satisfies Partial<DataMovement>);
    delete m.job;
  }
}

/** Deletes the superseded incremental base; a failure is a warning, the snapshot stays. */
async function dropBase(options: {
  movement: DataMovement;
  snapshotter?: Snapshotter;
  signal?: AbortSignal;
}): Promise<void> {
  const { movement } = options;
  const snapshot = movement.supersedes ?? '';
  try {
    if (!options.snapshotter) throw new LifeboatError('no EC2 access');
    await options.snapshotter.deleteSnapshot(snapshot, options.signal ? { signal: options.signal } : {});
    movement.note = {
      level: 'info',
      message: `Deleted snapshot ${snapshot}, the incremental base of manifest ${movement.parentManifestId}: ${movement.retainedSnapshot} is the volume's base now`,
    };
  } catch (error) {
    if (!(error instanceof LifeboatError)) throw error;
    movement.note = {
      level: 'warning',
      message: `Kept snapshot ${snapshot}, the former incremental base of manifest ${movement.parentManifestId}: ${error.message}`,
    };
  }
}

/** A waiting movement whose job can be made: its volume record, snapshot (block mode) and repository. */
interface ReadyToMove {
  readonly record: HandledVolumeRecord;
  readonly source: { snapshotId: string } | undefined;
  readonly access: DataMoverAccess;
}

/** Where a waiting movement stands this call: its snapshot still running, unable to move, or ready. */
type Readiness = { readonly waiting: true } | { readonly refused: string } | ReadyToMove;

function readinessOf(options: {
  movement: DataMovement;
  record: HandledVolumeRecord | undefined;
  statuses: ReadonlyMap<string, OperationStatus>;
  dataMover: DataMoverAccess | undefined;
}): Readiness {
  const { movement: m, record: h } = options;
  if (!h) return { refused: 'its volume record is gone from the working data' };
  let source: { snapshotId: string } | undefined;
  if (m.mode === 'block') {
    const status = h.operation ? options.statuses.get(h.operation.operationId) : undefined;
    if (!h.operation || !status || (status.phase !== 'Completed' && status.phase !== 'Failed'))
      return { waiting: true };
    const toMove = snapshotToMove({ operation: h.operation, status });
    if ('refused' in toMove) return { refused: `its data cannot be moved: ${toMove.refused}` };
    source = toMove;
  }
  const access = options.dataMover;
  if (!access) return { refused: NO_DATA_MOVER };
  return { record: h, source, access };
}

/** The job of a movement ready to move: a block-backup of its snapshot, or a file-backup of its files. */
function jobOf(options: {
  movement: DataMovement;
  ready: ReadyToMove;
  backupName: string;
  parentManifestId: string | undefined;
}): DataMoverJob {
  const { movement: m, parentManifestId } = options;
  const { record: h, source, access } = options.ready;
  const tags = {
    backup: options.backupName,
    ...(h.pvcName ? { pvcNamespace: h.pvcNamespace ?? '', pvcName: h.pvcName } : {}),
  };
  const common = { jobId: m.jobId, manifestId: m.jobId, repository: access.repository, tags };
  const volumeId = h.decision.action === 'snapshot' ? h.decision.ebsVolumeId : undefined;
  return source
    ? {
        kind: 'block-backup',
        ...common,
        source: {
          snapshotId: source.snapshotId,
          ...(volumeId ? { volumeId } : {}),
          ...(access.region ? { region: access.region } : {}),
          ...(parentManifestId ? { parentManifestId } : {}),
        },
      }
    : {
        kind: 'file-backup',
        ...common,
        source: { path: h.files?.path ?? '', ...(parentManifestId ? { parentManifestId } : {}) },
      };
}

/**
 * One call's work on the movements: settles those the state machine reports it ran, makes the
 * jobs of those whose snapshot completed (or that read files), fails those that cannot move,
 * and returns the jobs to run now.
 */
export async function advanceMovements(options: {
  movements: DataMovement[];
  /** Final operation statuses by operation id. */
  statuses: ReadonlyMap<string, OperationStatus>;
  /** The volume records, to find each movement's snapshot operation and files. */
  blocks: readonly BlockVolumes[];
  moved?: readonly { jobId: string; error?: string }[];
  backup: { name: string };
  store: ObjectStore;
  snapshotter?: Snapshotter;
  dataMover?: DataMoverAccess;
  now: Date;
  signal?: AbortSignal;
}): Promise<DataMoverJob[]> {
  const { movements, store, signal } = options;
  const at = options.now.toISOString();
  await settle({ ...options, moved: options.moved ?? [] });

  const records = new Map(options.blocks.flatMap((b) => b.handled).map((h) => [movementKeyOf(h), h]));
  let manifestIds: string[] | undefined;
  const parentOf = async (own: string): Promise<string | undefined> => {
    manifestIds ??= (await store.list(repositoryKeys.snapshotsDir, signal ? { signal } : {})).map(
      repositoryKeyId,
    );
    return parentManifestOf({ manifestIds, own });
  };

  for (const m of movements) {
    if (m.state !== 'Waiting') continue;
    const readiness = readinessOf({
      movement: m,
      record: records.get(m.key),
      statuses: options.statuses,
      dataMover: options.dataMover,
    });
    if ('waiting' in readiness) continue;
    if ('refused' in readiness) {
      Object.assign(m, { state: 'Failed', updated: at, error: readiness.refused });
      continue;
    }
    const parentManifestId = await parentOf(m.jobId);
    const supersedes =
      parentManifestId && m.mode === 'block'
        ? await retainedSnapshotOf({ store, manifestId: parentManifestId, ...(signal ? { signal } : {}) })
        : undefined;
    const job = jobOf({ movement: m, ready: readiness, backupName: options.backup.name, parentManifestId });
    Object.assign(m, {
      state: 'Ready',
      updated: at,
      job,
      ...(parentManifestId ? { parentManifestId } : {}),
      ...(supersedes ? { supersedes } : {}),
    } satisfies Partial<DataMovement>);
  }
  return movements
    .filter((m) => m.state === 'Ready' && m.job)
    .slice(0, options.dataMover?.batch ?? DEFAULT_BATCH)
    .map((m) => m.job as DataMoverJob);
}
