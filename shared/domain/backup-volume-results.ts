/**
 * What a backup's volumes come to once every operation has settled: the volumes-info entries
 * (exactly one per PVC/PV of the backup), Velero's native `volume.Snapshot` records, the item
 * operations file, the status counters, and an error for every volume whose snapshot failed
 * (the backup then ends PartiallyFailed, as Velero's does when a snapshot fails).
 * Pure: the workers' records and the final operation statuses in, files' contents out.
 */
import {
  assembleBackupVolumeInfos,
  type BackupVolumeInfo,
  backupVolumesOf,
  type ClaimFacts,
  type CsiSnapshotOutcome,
  type HandledVolume,
  type NativeVolumeSnapshot,
  nativeVolumeSnapshotOf,
  type PersistentVolumeFacts,
} from './volume-info.js';
import {
  type BackupOperation,
  backupOperationOf,
  type OperationStatus,
  type VolumeOperationSpec,
} from './volume-operations.js';
import type { VolumeDecision } from './volume-policy.js';

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
}): BackupVolumeResults {
  const { blocks, statuses } = options;
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
      handled.push({ ...names, decision: h.decision, csiOutcome });
      if (!succeeded)
        failures.push({
          scope: scopeOf(h),
          message: `CSI snapshot of ${describe(h)} failed: ${failure ?? 'unknown error'}`,
        });
      continue;
    }
    handled.push({ ...names, decision: h.decision });
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
