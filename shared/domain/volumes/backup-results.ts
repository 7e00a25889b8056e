/**
 * What a backup's volumes come to once every operation has settled: the volumes-info entries
 * (exactly one per PVC/PV of the backup), Velero's native `volume.Snapshot` records, the item
 * operations file, the status counters, and an error for every volume whose snapshot failed
 * (the backup then ends PartiallyFailed, as Velero's does when a snapshot fails).
 * Pure: the workers' records and the final operation statuses in, files' contents out.
 */
import { DATA_MOVER_ACTION, type DataMovementFacts, movementKeyOf } from './data-movement.js';
import {
  assembleBackupVolumeInfos,
  type BackupVolumeInfo,
  backupVolumesOf,
  type ClaimFacts,
  type CsiSnapshotOutcome,
  type DataMovementOutcome,
  type HandledVolume,
  kubeTime,
  type NativeVolumeSnapshot,
  nativeVolumeSnapshotOf,
  type PersistentVolumeFacts,
} from './info.js';
import {
  type BackupOperation,
  backupOperationOf,
  type OperationStatus,
  type VolumeOperationSpec,
} from './operations.js';
import type { VolumeDecision } from './policy.js';

/** A worker's record of one volume it decided on (and the snapshot it started, if any). */
export interface HandledVolumeFacts {
  readonly pvName?: string;
  readonly pvcNamespace?: string;
  readonly pvcName?: string;
  readonly decision: VolumeDecision;
  readonly native?: {
    readonly volumeId: string;
    readonly volumeType: string;
    readonly iops?: number;
    readonly availabilityZone: string;
    readonly snapshotId?: string;
  };
  readonly csi?: {
    readonly volumeSnapshotNamespace: string;
    readonly volumeSnapshotName?: string;
    readonly driver: string;
  };
  readonly error?: string;
  readonly startedAt?: string;
  readonly operation?: VolumeOperationSpec;
  /** fs-backup: the directory the data mover reads the volume's files from. */
  readonly files?: { readonly path: string; readonly nodeName?: string };
  /** fs-backup: why the data mover cannot reach the volume's files. */
  readonly filesUnreachable?: string;
}

export interface BlockVolumeFacts {
  readonly claims: readonly ClaimFacts[];
  readonly persistentVolumes: readonly PersistentVolumeFacts[];
  readonly handled: readonly HandledVolumeFacts[];
}

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
  const handled: HandledVolume[] = [];
  const nativeSnapshots: NativeVolumeSnapshot[] = [];
  const operations: BackupOperation[] = [];
  const failures: VolumeFailure[] = [];
  let native = 0;
  let nativeDone = 0;
  let csi = 0;
  let csiDone = 0;
  for (const h of blocks.flatMap((b) => b.handled)) {
    const status = h.operation ? statuses.get(h.operation.operationId) : undefined;
    if (h.operation) {
      operations.push(
        backupOperationOf({
          backupName: options.backupName,
          backupUID: options.backupUID,
          operation: h.operation,
          status: status ?? { phase: 'Failed', error: 'the operation was never polled' },
        }),
      );
    }
    const moved = movedBy(h, movements);
    if (moved) {
      operations.push(
        dataMovementOperationOf({ backupName: options.backupName, backupUID: options.backupUID, h, moved }),
      );
      // A movement of a snapshot that failed fails with it: one error, the snapshot's.
      const snapshotFailed =
        h.error !== undefined || (h.operation !== undefined && status?.phase !== 'Completed');
      if (moved.phase !== 'Completed' && !snapshotFailed)
        failures.push({
          scope: scopeOf(h),
          message: `${moved.mode === 'file' ? 'file backup' : 'data movement'} of ${describe(h)} failed: ${moved.error}`,
        });
    }
    const names = {
      ...(h.pvName ? { pvName: h.pvName } : {}),
      ...(h.pvcName ? { pvcName: h.pvcName, pvcNamespace: h.pvcNamespace ?? '' } : {}),
    };
    const failure = h.error ?? (status?.phase === 'Failed' ? (status.error ?? 'failed') : undefined);
    if (h.native) {
      native++;
      const phase = nativePhase(h, status);
      if (phase === 'Completed') nativeDone++;
      const snapshot = nativeVolumeSnapshotOf({
        backupName: options.backupName,
        backupUID: options.backupUID,
        location: options.location,
        pvName: h.pvName ?? '',
        volumeId: h.native.volumeId,
        volumeType: h.native.volumeType,
        volumeAZ: h.native.availabilityZone,
        ...(h.native.iops === undefined ? {} : { iops: h.native.iops }),
        ...(h.native.snapshotId ? { snapshotId: h.native.snapshotId } : {}),
        phase,
      });
      nativeSnapshots.push(snapshot);
      handled.push({
        ...names,
        decision: h.decision,
        outcome: {
          snapshot,
          ...(h.startedAt ? { startedAt: h.startedAt } : {}),
          ...(status?.updated && phase === 'Completed' ? { completedAt: status.updated } : {}),
        },
        ...(moved ? { movement: moved.outcome } : {}),
      });
      if (phase === 'Failed')
        failures.push({
          scope: scopeOf(h),
          message: `native snapshot of ${describe(h)} failed: ${failure ?? 'unknown error'}`,
        });
      continue;
    }
    if (h.csi) {
      csi++;
      const succeeded = !h.error && status?.phase === 'Completed';
      if (succeeded) csiDone++;
      const facts = status?.csi ?? {};
      const csiOutcome: CsiSnapshotOutcome = {
        info: {
          snapshotHandle: facts.snapshotHandle ?? '',
          size: facts.size ?? 0,
          driver: facts.driver ?? h.csi.driver,
          vscName: facts.vscName ?? '',
          ...(h.operation ? { operationID: h.operation.operationId } : {}),
          ReadyToUse: facts.readyToUse ?? null,
        },
        succeeded,
        ...(h.startedAt ? { startedAt: h.startedAt } : {}),
        ...(status?.updated && succeeded ? { completedAt: status.updated } : {}),
      };
      handled.push({
        ...names,
        decision: h.decision,
        csiOutcome,
        ...(moved ? { movement: moved.outcome } : {}),
      });
      if (!succeeded)
        failures.push({
          scope: scopeOf(h),
          message: `CSI snapshot of ${describe(h)} failed: ${failure ?? 'unknown error'}`,
        });
      continue;
    }
    handled.push({
      ...names,
      decision: h.decision,
      ...(moved ? { movement: moved.outcome } : {}),
      ...(h.filesUnreachable ? { filesUnreachable: h.filesUnreachable } : {}),
    });
  }
  const volumes = backupVolumesOf({
    pvcs: blocks.flatMap((b) => b.claims),
    pvs: blocks.flatMap((b) => b.persistentVolumes),
  });
  const { infos, unmatched } = assembleBackupVolumeInfos({ volumes, handled });
  const phases = operations.map((o) => o.status.phase);
  return {
    volumeInfos: infos,
    nativeSnapshots,
    operations,
    counters: {
      volumeSnapshotsAttempted: native,
      volumeSnapshotsCompleted: nativeDone,
      csiVolumeSnapshotsAttempted: csi,
      csiVolumeSnapshotsCompleted: csiDone,
      backupItemOperationsAttempted: operations.length,
      backupItemOperationsCompleted: phases.filter((p) => p === 'Completed').length,
      backupItemOperationsFailed: phases.filter((p) => p === 'Failed').length,
    },
    failures,
    unmatched,
  };
}

interface MovedVolume {
  readonly mode: 'block' | 'file';
  readonly phase: DataMovementOutcome['phase'];
  readonly error?: string;
  readonly facts?: DataMovementFacts;
  readonly outcome: DataMovementOutcome;
}

/**
 * The data movement of a volume the backup asked to move (snapshotMoveData with a snapshot
 * started, or fs-backup with its files reachable): as VolumeOperations recorded it, or failed
 * when it never got that far.
 */
function movedBy(
  h: HandledVolumeFacts,
  movements: ReadonlyMap<string, DataMovementFacts>,
): MovedVolume | undefined {
  const file = h.decision.action === 'fs-backup' && h.files !== undefined;
  const block = h.decision.action === 'snapshot' && h.decision.moveData && h.operation !== undefined;
  if (!file && !block) return undefined;
  const facts = movements.get(movementKeyOf(h));
  const settled = facts?.state === 'Completed' || facts?.state === 'Failed';
  const phase = facts?.state === 'Completed' ? 'Completed' : 'Failed';
  const error = settled ? facts?.error : 'the data mover never ran for it';
  const pod = h.decision.action === 'fs-backup' ? h.decision.pod : undefined;
  return {
    mode: file ? 'file' : 'block',
    phase,
    ...(phase === 'Failed' ? { error: error ?? 'failed' } : {}),
    ...(facts ? { facts } : {}),
    outcome: {
      mode: file ? 'file' : 'block',
      phase,
      operationId: facts?.jobId ?? '',
      manifestId: phase === 'Completed' ? (facts?.manifestId ?? '') : '',
      size: facts?.size ?? 0,
      ...(facts?.retainedSnapshot ? { retainedSnapshot: facts.retainedSnapshot } : {}),
      ...(facts?.started ? { startedAt: facts.started } : {}),
      ...(facts?.updated && phase === 'Completed' ? { completedAt: facts.updated } : {}),
      ...(pod
        ? {
            pod: {
              namespace: pod.namespace,
              name: pod.name,
              volumeName: pod.volumeName,
              ...(h.files?.nodeName ? { nodeName: h.files.nodeName } : {}),
            },
          }
        : {}),
    },
  };
}

/** The item operations file's record of a data movement (Velero: the DataUpload's operation). */
function dataMovementOperationOf(options: {
  backupName: string;
  backupUID: string;
  h: HandledVolumeFacts;
  moved: MovedVolume;
}): BackupOperation {
  const { h, moved } = options;
  const facts = moved.facts;
  const resource = h.pvcName
    ? { Group: '', Resource: 'persistentvolumeclaims', Namespace: h.pvcNamespace ?? '', Name: h.pvcName }
    : { Group: '', Resource: 'persistentvolumes', Namespace: '', Name: h.pvName ?? '' };
  const status = Object.fromEntries(
    Object.entries({
      phase: moved.phase,
      error: moved.error,
      nCompleted: facts?.bytesDone,
      nTotal: facts?.size,
      operationUnits: 'Bytes',
      description: facts?.state,
      created: facts ? kubeTime(facts.created) : undefined,
      started: facts?.started ? kubeTime(facts.started) : undefined,
      updated: facts?.updated ? kubeTime(facts.updated) : undefined,
      // Go's omitempty drops zero numbers and empty strings.
    }).filter(([, v]) => v !== undefined && v !== '' && v !== 0),
  ) as BackupOperation['status'];
  return {
    spec: {
      backupName: options.backupName,
      backupUID: options.backupUID,
      backupItemAction: DATA_MOVER_ACTION,
      ResourceIdentifier: resource,
      OperationID: facts?.jobId ?? '',
      PostOperationItems: null,
    },
    status,
  };
}
