/**
 * The shapes of a volume restore's plan (restore.ts): what happens to each backed-up PV, the
 * volumes to re-create, the re-provisioned volumes to patch once bound, and the notes for the
 * restore's log and results. Types only, so the plan's parts (pv-action.ts, restore-claims.ts)
 * share them without importing each other.
 */
import type { PVInfo, RestoreVolumeInfo, SnapshotDataMovementInfo } from './info-shapes.js';

type Json = Record<string, unknown>;

/** Where a native snapshot's volume is re-created. */
export interface SnapshotSource {
  readonly snapshotHandle: string;
  readonly volumeType: string;
  /** Provisioned IOPS (io1/io2), as recorded. */
  readonly iops?: number;
  readonly availabilityZone: string;
  readonly recordedAvailabilityZone: string;
  /** Restored from the data mover's repository (this manifest), not from the snapshot. */
  readonly movedData?: MovedData;
}

/** A volume whose data Lifeboat's data mover moved: what the restore and its volume info need. */
export interface MovedData {
  readonly manifestId: string;
  readonly backupMethod: 'NativeSnapshot' | 'CSISnapshot';
  readonly info: SnapshotDataMovementInfo;
}

export type PersistentVolumeAction =
  /** Restored as backed up, binding reset; `rename` when Velero gives it a new name. */
  | { readonly action: 'restore'; readonly reason: string; readonly rename?: string }
  | { readonly action: 'from-snapshot'; readonly source: SnapshotSource; readonly rename?: string }
  /** Not restored: the PVC gets a new volume from its storage class. */
  | { readonly action: 'reprovision'; readonly reason: string; readonly warning?: string }
  /** Not restored, an error of the restore. */
  | { readonly action: 'fail'; readonly reason: string };

export interface PvRestoreFacts {
  readonly name: string;
  readonly claimNamespace?: string;
  readonly reclaimPolicy?: string;
  /** Whether the PV is an EBS volume (CSI ebs.csi.aws.com or in-tree). */
  readonly ebs: boolean;
  /** Its zone by labels, node affinity or in-tree id (Velero's lookup). */
  readonly zone?: string;
}

/** A volume to re-create from a native snapshot before the PVs are restored. */
export interface NativeVolumeRestore extends SnapshotSource {
  /** The PV as restored (its new name when renamed). */
  readonly pvName: string;
  readonly sourcePvName: string;
  /** The PVC that claims it, in the target namespace. */
  readonly pvcNamespace?: string;
  readonly pvcName?: string;
}

/** A re-provisioned PV to give its backed-up reclaim policy and labels once its PVC is bound. */
export interface ProvisionedVolume {
  readonly pvcNamespace: string;
  readonly pvcName: string;
  readonly sourcePvName?: string;
  readonly pvInfo: PVInfo;
  /** Files the data mover backed up, to restore into the new volume once the PVC is bound. */
  readonly files?: { readonly manifestId: string; readonly podName: string; readonly volumeName: string };
}

export interface VolumeNote {
  readonly level: 'info' | 'warning' | 'error';
  readonly message: string;
  /** The target namespace of a PVC's note; cluster scope when absent. */
  readonly namespace?: string;
  readonly name: string;
}

export interface VolumeRestorePlan {
  /** Backed-up PVs to restore, rewritten; PVs not restored are left out. */
  readonly pvs: Json[];
  /** Backed-up PVCs, rewritten (still in their source namespace). */
  readonly pvcs: Json[];
  /** VolumeSnapshotContents and VolumeSnapshots (VolumeSnapshots in the source namespace). */
  readonly snapshots: { readonly groupResource: string; readonly object: Json }[];
  readonly native: NativeVolumeRestore[];
  readonly provisioned: ProvisionedVolume[];
  /** The restore's volume info, except native snapshots (known once their volumes exist). */
  readonly restoreInfos: RestoreVolumeInfo[];
  readonly notes: VolumeNote[];
}
