/**
 * What a backup's volumes come to once every operation has settled: the volumes-info entries
 * (exactly one per PVC/PV of the backup), Velero's native `volume.Snapshot` records, the item
 * operations file, the status counters, and an error for every volume whose snapshot failed
 * (the backup then ends PartiallyFailed, as Velero's does when a snapshot fails).
 * Pure: the workers' records and the final operation statuses in, files' contents out.
 */
import type { DataMovementFacts } from './data-movement.js';
import {
  assembleBackupVolumeInfos,
  type BackupVolumeInfo,
  backupVolumesOf,
  type CsiSnapshotOutcome,
  type HandledVolume,
  type NativeVolumeSnapshot,
  nativeVolumeSnapshotOf,
} from './info.js';
import { dataMovementOperationOf, type MovedVolume, movedBy } from './movement-results.js';
import { type BackupOperation, backupOperationOf, type OperationStatus } from './operations.js';
import type { BlockVolumeFacts, HandledVolumeFacts } from './worker-records.js';

export type { BlockVolumeFacts, HandledVolumeFacts } from './worker-records.js';

export interface VolumeCounters {
  readonly volumeSnapshotsAttempted: number;
  readonly volumeSnapshotsCompleted: number;
  readonly csiVolumeSnapshotsAttempted: number;
  readonly csiVolumeSnapshotsCompleted: number;
  readonly backupItemOperationsAttempted: number;
  readonly backupItemOperationsCompleted: number;
  readonly backupItemOperationsFailed: number;
}

export interface VolumeFailure {
  /** The PVC's namespace, or the cluster for a PV without one. */
  readonly scope: 'cluster' | { readonly namespace: string };
  readonly message: string;
}

export interface BackupVolumeResults {
  readonly volumeInfos: BackupVolumeInfo[];
  readonly nativeSnapshots: NativeVolumeSnapshot[];
  readonly operations: BackupOperation[];
  readonly counters: VolumeCounters;
  readonly failures: VolumeFailure[];
  /** Records naming no PVC/PV of the backup (reported, never silently dropped). */
  readonly unmatched: HandledVolume[];
}

const describe = (h: HandledVolumeFacts): string =>
  h.pvcName
    ? `PVC ${h.pvcNamespace ?? ''}/${h.pvcName}${h.pvName ? ` (PV ${h.pvName})` : ''}`
    : `PV ${h.pvName ?? ''}`;

const scopeOf = (h: HandledVolumeFacts): VolumeFailure['scope'] =>
  h.pvcNamespace ? { namespace: h.pvcNamespace } : 'cluster';

/** The snapshot's phase as Velero records it from the operation's final status. */
function nativePhase(h: HandledVolumeFacts, status: OperationStatus | undefined): 'Completed' | 'Failed' {
  if (h.error || !h.native?.snapshotId) return 'Failed';
  return status?.phase === 'Completed' ? 'Completed' : 'Failed';
}

export function backupVolumeResults(options: {
  backupName: string;
  backupUID: string;
  /** The volume snapshot location's name recorded in native snapshots. */
  location: string;
  blocks: readonly BlockVolumeFacts[];
  /** Final status of each operation by its id. */
  statuses: ReadonlyMap<string, OperationStatus>;
  /** Each data movement by its volume (movementKeyOf). */
  movements?: ReadonlyMap<string, DataMovementFacts>;
}): BackupVolumeResults {
  const { blocks, statuses } = options;
  const movements = options.movements ?? new Map<string, DataMovementFacts>();
  const results: ResultsSoFar = {
    backup: options,
    handled: [],
    nativeSnapshots: [],
    operations: [],
    failures: [],
    counts: { native: 0, nativeDone: 0, csi: 0, csiDone: 0 },
  };
  for (const h of blocks.flatMap((b) => b.handled)) {
    const volume = settledVolumeOf({ h, statuses, movements });
    recordOperations(results, volume);
    if (h.native) recordNativeSnapshot(results, { volume, native: h.native });
    else if (h.csi) recordCsiSnapshot(results, { volume, csi: h.csi });
    else
      results.handled.push({
        ...volume.names,
        decision: h.decision,
        ...(volume.moved ? { movement: volume.moved.outcome } : {}),
        ...(h.filesUnreachable ? { filesUnreachable: h.filesUnreachable } : {}),
      });
  }
  const volumes = backupVolumesOf({
    pvcs: blocks.flatMap((b) => b.claims),
    pvs: blocks.flatMap((b) => b.persistentVolumes),
  });
  const { infos, unmatched } = assembleBackupVolumeInfos({ volumes, handled: results.handled });
  return {
    volumeInfos: infos,
    nativeSnapshots: results.nativeSnapshots,
    operations: results.operations,
    counters: countersOf(results),
    failures: results.failures,
    unmatched,
  };
}

/** What the volumes recorded so far come to, and the backup they belong to. */
interface ResultsSoFar {
  readonly backup: { readonly backupName: string; readonly backupUID: string; readonly location: string };
  readonly handled: HandledVolume[];
  readonly nativeSnapshots: NativeVolumeSnapshot[];
  readonly operations: BackupOperation[];
  readonly failures: VolumeFailure[];
  /** Native and CSI snapshots attempted, and those completed. */
  readonly counts: { native: number; nativeDone: number; csi: number; csiDone: number };
}

/** A worker's record with what became of it: its operation's final status and its data movement. */
interface SettledVolume {
  readonly h: HandledVolumeFacts;
  readonly status: OperationStatus | undefined;
  readonly moved: MovedVolume | undefined;
  /** The PV and PVC the record names, as volumes-info names them. */
  readonly names: { readonly pvName?: string; readonly pvcName?: string; readonly pvcNamespace?: string };
  /** Why its snapshot failed, as the worker or the operation's final status says. */
  readonly failure: string | undefined;
}

function settledVolumeOf(options: {
  h: HandledVolumeFacts;
  statuses: ReadonlyMap<string, OperationStatus>;
  movements: ReadonlyMap<string, DataMovementFacts>;
}): SettledVolume {
  const { h } = options;
  const status = h.operation ? options.statuses.get(h.operation.operationId) : undefined;
  return {
    h,
    status,
    moved: movedBy(h, options.movements),
    names: {
      ...(h.pvName ? { pvName: h.pvName } : {}),
      ...(h.pvcName ? { pvcName: h.pvcName, pvcNamespace: h.pvcNamespace ?? '' } : {}),
    },
    failure: h.error ?? (status?.phase === 'Failed' ? (status.error ?? 'failed') : undefined),
  };
}

/** The volume's item operations (its snapshot's, its data movement's) and a failed movement's error. */
function recordOperations(results: ResultsSoFar, volume: SettledVolume): void {
  const { h, status, moved } = volume;
  const { backupName, backupUID } = results.backup;
  if (h.operation) {
    results.operations.push(
      backupOperationOf({
        backupName,
        backupUID,
        operation: h.operation,
        status: status ?? { phase: 'Failed', error: 'the operation was never polled' },
      }),
    );
  }
  if (!moved) return;
  results.operations.push(dataMovementOperationOf({ backupName, backupUID, h, moved }));
  // A movement of a snapshot that failed fails with it: one error, the snapshot's.
  const snapshotFailed =
    h.error !== undefined || (h.operation !== undefined && status?.phase !== 'Completed');
  if (moved.phase !== 'Completed' && !snapshotFailed)
    results.failures.push({
      scope: scopeOf(h),
      message: `${moved.mode === 'file' ? 'file backup' : 'data movement'} of ${describe(h)} failed: ${moved.error}`,
    });
}

/** A native snapshot: Velero's `volume.Snapshot` record, the volume's outcome, an error when it failed. */
function recordNativeSnapshot(
  results: ResultsSoFar,
  snapshotOf: { volume: SettledVolume; native: NonNullable<HandledVolumeFacts['native']> },
): void {
  const { volume, native } = snapshotOf;
  const { h, status, moved } = volume;
  results.counts.native++;
  const phase = nativePhase(h, status);
  if (phase === 'Completed') results.counts.nativeDone++;
  const snapshot = nativeVolumeSnapshotOf({
    backupName: results.backup.backupName,
    backupUID: results.backup.backupUID,
    location: results.backup.location,
    pvName: h.pvName ?? '',
    volumeId: native.volumeId,
    volumeType: native.volumeType,
    volumeAZ: native.availabilityZone,
    ...(native.iops === undefined ? {} : { iops: native.iops }),
    ...(native.snapshotId ? { snapshotId: native.snapshotId } : {}),
    phase,
  });
  results.nativeSnapshots.push(snapshot);
  results.handled.push({
    ...volume.names,
    decision: h.decision,
    outcome: {
      snapshot,
      ...(h.startedAt ? { startedAt: h.startedAt } : {}),
      ...(status?.updated && phase === 'Completed' ? { completedAt: status.updated } : {}),
    },
    ...(moved ? { movement: moved.outcome } : {}),
  });
  if (phase === 'Failed')
    results.failures.push({
      scope: scopeOf(h),
      message: `native snapshot of ${describe(h)} failed: ${volume.failure ?? 'unknown error'}`,
    });
}

/** A CSI snapshot: the volume's outcome as its operation settled, an error when it failed. */
function recordCsiSnapshot(
  results: ResultsSoFar,
  snapshotOf: { volume: SettledVolume; csi: NonNullable<HandledVolumeFacts['csi']> },
): void {
  const { volume, csi } = snapshotOf;
  const { h, status, moved } = volume;
  results.counts.csi++;
  const succeeded = !h.error && status?.phase === 'Completed';
  if (succeeded) results.counts.csiDone++;
  const facts = status?.csi ?? {};
  const csiOutcome: CsiSnapshotOutcome = {
    info: {
      snapshotHandle: facts.snapshotHandle ?? '',
      size: facts.size ?? 0,
      driver: facts.driver ?? csi.driver,
      vscName: facts.vscName ?? '',
      ...(h.operation ? { operationID: h.operation.operationId } : {}),
      ReadyToUse: facts.readyToUse ?? null,
    },
    succeeded,
    ...(h.startedAt ? { startedAt: h.startedAt } : {}),
    ...(status?.updated && succeeded ? { completedAt: status.updated } : {}),
  };
  results.handled.push({
    ...volume.names,
    decision: h.decision,
    csiOutcome,
    ...(moved ? { movement: moved.outcome } : {}),
  });
  if (!succeeded)
    results.failures.push({
      scope: scopeOf(h),
      message: `CSI snapshot of ${describe(h)} failed: ${volume.failure ?? 'unknown error'}`,
    });
}

function countersOf(results: ResultsSoFar): VolumeCounters {
  const { counts, operations } = results;
  const phases = operations.map((o) => o.status.phase);
  return {
    volumeSnapshotsAttempted: counts.native,
    volumeSnapshotsCompleted: counts.nativeDone,
    csiVolumeSnapshotsAttempted: counts.csi,
    csiVolumeSnapshotsCompleted: counts.csiDone,
    backupItemOperationsAttempted: operations.length,
    backupItemOperationsCompleted: phases.filter((p) => p === 'Completed').length,
    backupItemOperationsFailed: phases.filter((p) => p === 'Failed').length,
  };
}
