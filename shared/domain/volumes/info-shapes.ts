/**
 * The JSON shapes of volumes-info (`<backup>-volumeinfo.json.gz`, restores'
 * `<restore>-volumeinfo.json.gz`; Velero `internal/volume/volumes_information.go`) and of Velero's
 * native `volume.Snapshot` records (`<backup>-volumesnapshots.json.gz`), with their builders.
 * Key spellings are Velero's exactly, including the Go field names that carry no json tag
 * (`Phase`, `ReadyToUse`); optional keys are left out where Go's `omitempty` leaves them out.
 * Pure: never reads a clock.
 */
export type VolumeMethod = 'NativeSnapshot' | 'PodVolumeBackup' | 'CSISnapshot' | 'PodVolumeRestore';
export type VolumeResult = 'succeeded' | 'failed';
export type NativeSnapshotPhase = 'New' | 'InProgress' | 'Completed' | 'Failed';

export interface CSISnapshotInfo {
  readonly snapshotHandle: string;
  readonly size: number;
  readonly driver: string;
  readonly vscName: string;
  readonly operationID?: string;
  /** Go `*bool` without a json tag: always present, null when unknown. */
  readonly ReadyToUse: boolean | null;
}

export interface SnapshotDataMovementInfo {
  readonly dataMover: string;
  readonly uploaderType: string;
  readonly retainedSnapshot?: string;
  readonly snapshotHandle: string;
  readonly operationID: string;
  readonly size: number;
  readonly Phase: string;
}

export interface NativeSnapshotInfo {
  readonly snapshotHandle: string;
  readonly volumeType: string;
  readonly volumeAZ: string;
  /** A decimal string, "0" when the volume type has no provisioned IOPS. */
  readonly iops: string;
  /** Empty in restore entries, where Velero does not set it. */
  readonly Phase: NativeSnapshotPhase | '';
}

export interface PodVolumeInfo {
  readonly snapshotHandle?: string;
  readonly size?: number;
  readonly uploaderType: string;
  readonly volumeName: string;
  readonly podName: string;
  readonly podNamespace: string;
  readonly nodeName?: string;
  readonly Phase: string;
}

export interface PVInfo {
  readonly reclaimPolicy: string;
  /** Go map without omitempty: null when the PV has no labels. */
  readonly labels: Readonly<Record<string, string>> | null;
}

export type CopyPhase = 'New' | 'InProgress' | 'Completed' | 'Failed';

/** One copy of a volume's snapshot (Lifeboat's copySnapshots, snapshot-copies.ts), as volumes-info records it. */
export interface SnapshotCopyInfo {
  /** Absent when the copy stays in the backup's account. */
  readonly account?: string;
  readonly region: string;
  /** The copy's snapshot id in the target; empty until CopySnapshot answered. */
  readonly snapshotHandle: string;
  /** The snapshot copied (the native snapshot, or the CSI snapshot's handle). */
  readonly sourceSnapshotHandle: string;
  readonly kmsKeyId?: string;
  readonly startTimestamp?: string;
  readonly completionTimestamp?: string;
  readonly Phase: CopyPhase;
  readonly error?: string;
  /**
   * Lifeboat: the backup's own account, where a copy without `account` lives (its owner, as EC2
   * reported it); absent in records written before it was kept.
   */
  readonly backupAccount?: string;
}

export interface BackupVolumeInfo {
  readonly pvcName?: string;
  readonly pvcNamespace?: string;
  readonly pvName?: string;
  readonly backupMethod?: Exclude<VolumeMethod, 'PodVolumeRestore'>;
  readonly snapshotDataMoved: boolean;
  readonly preserveLocalSnapshot: boolean;
  readonly skipped: boolean;
  readonly skippedReason?: string;
  readonly startTimestamp?: string;
  readonly completionTimestamp?: string;
  readonly result?: VolumeResult;
  readonly csiSnapshotInfo?: CSISnapshotInfo;
  readonly snapshotDataMovementInfo?: SnapshotDataMovementInfo;
  readonly nativeSnapshotInfo?: NativeSnapshotInfo;
  readonly pvbInfo?: PodVolumeInfo;
  readonly pvInfo?: PVInfo;
  /** Lifeboat (`copySnapshots`): the snapshot's copies in other accounts and regions. */
  readonly snapshotCopies?: readonly SnapshotCopyInfo[];
}

export interface RestoreVolumeInfo {
  readonly pvcName?: string;
  readonly pvcNamespace?: string;
  readonly pvName?: string;
  readonly restoreMethod?: VolumeMethod;
  readonly snapshotDataMoved: boolean;
  readonly csiSnapshotInfo?: CSISnapshotInfo;
  readonly snapshotDataMovementInfo?: SnapshotDataMovementInfo;
  readonly nativeSnapshotInfo?: NativeSnapshotInfo;
  readonly pvrInfo?: PodVolumeInfo;
}

/** Velero's native `volume.Snapshot`, one per native snapshot taken. */
export interface NativeVolumeSnapshot {
  readonly spec: {
    readonly backupName: string;
    readonly backupUID: string;
    readonly location: string;
    readonly persistentVolumeName: string;
    readonly providerVolumeID: string;
    readonly volumeType: string;
    readonly volumeAZ?: string;
    readonly volumeIOPS?: number;
  };
  readonly status: { readonly providerSnapshotID?: string; readonly phase?: NativeSnapshotPhase };
}

/** A metav1.Time as Go marshals it: RFC 3339, whole seconds, UTC. */
export function kubeTime(at: Date | string): string {
  return new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const some = <K extends string, V>(key: K, value: V | undefined | ''): { [P in K]?: V } =>
  (value === undefined || value === '' ? {} : { [key]: value }) as { [P in K]?: V };

export function nativeVolumeSnapshotOf(options: {
  backupName: string;
  backupUID: string;
  /** The volume snapshot location's name. */
  location: string;
  pvName: string;
  volumeId: string;
  volumeType: string;
  volumeAZ?: string;
  iops?: number;
  snapshotId?: string;
  phase: NativeSnapshotPhase;
}): NativeVolumeSnapshot {
  return {
    spec: {
      backupName: options.backupName,
      backupUID: options.backupUID,
      location: options.location,
      persistentVolumeName: options.pvName,
      providerVolumeID: options.volumeId,
      volumeType: options.volumeType,
      ...some('volumeAZ', options.volumeAZ),
      ...some('volumeIOPS', options.iops),
    },
    status: { ...some('providerSnapshotID', options.snapshotId), phase: options.phase },
  };
}

/** Velero newNativeSnapshotInfo. */
export function nativeSnapshotInfoOf(snapshot: NativeVolumeSnapshot): NativeSnapshotInfo {
  return {
    snapshotHandle: snapshot.status.providerSnapshotID ?? '',
    volumeType: snapshot.spec.volumeType,
    volumeAZ: snapshot.spec.volumeAZ ?? '',
    iops: String(snapshot.spec.volumeIOPS ?? 0),
    Phase: snapshot.status.phase ?? '',
  };
}

/** A restore's entry for a PV re-created from a native snapshot (Velero TrackNativeSnapshot). */
export function restoredFromNativeSnapshot(options: {
  pvName: string;
  pvcName?: string;
  pvcNamespace?: string;
  snapshotHandle: string;
  volumeType: string;
  volumeAZ: string;
  iops?: number;
}): RestoreVolumeInfo {
  return {
    ...some('pvcName', options.pvcName),
    ...some('pvcNamespace', options.pvcNamespace),
    pvName: options.pvName,
    restoreMethod: 'NativeSnapshot',
    snapshotDataMoved: false,
    nativeSnapshotInfo: {
      snapshotHandle: options.snapshotHandle,
      volumeType: options.volumeType,
      volumeAZ: options.volumeAZ,
      iops: String(options.iops ?? 0),
      Phase: '',
    },
  };
}
