/**
 * What a restore does with each volume, decided from the backup's volumes-info as Velero's
 * restore does (restore.go, PV handling by `backupMethod` keyed by PV name; the CSI PVC restore
 * item action; the restore finalizer's PVInfo patch):
 * - NativeSnapshot: the PV points at a new volume created from the snapshot, in the recorded
 *   zone or the one the request names (Lifeboat), unless the PV already exists; renamed
 *   `velero-clone-<uuid>` when it exists and its claim's namespace is mapped; `restorePVs: false`
 *   restores it as backed up, pointing at the old volume, as Velero does.
 * - CSISnapshot: the PV is not restored; the PVC fills from a pre-provisioned VolumeSnapshot
 *   (or, with `restorePVs: false`, gets an empty volume).
 * - PodVolumeBackup, or no snapshot and reclaim policy Delete: the PV is not restored, the PVC
 *   is re-provisioned; files Lifeboat's data mover backed up are restored into it once bound. No snapshot and another reclaim policy: the PV is restored as backed up.
 * - Data moved by Lifeboat's data mover (`snapshotDataMoved`, native or CSI): as a native
 *   snapshot, but the new volume is written from the repository by the data mover, in the zone,
 *   region and account the request names (Lifeboat; Velero's data mover fills a provisioned PVC
 *   instead). Data moved by Velero's own data mover (kopia) cannot be read: re-provisioned, warned.
 * A PV the volumes-info does not name is restored as backed up (backups written before
 * volumes-info existed). Pure: names that need randomness or hashing are injected.
 */
import { movedByLifeboat } from './data-movement.js';
import { availabilityZoneOf, ebsVolumeIdOf } from './ebs-volume.js';
import type { BackupVolumeInfo, PVInfo, RestoreVolumeInfo, SnapshotDataMovementInfo } from './info-shapes.js';
import { claimForRestore, filesOf, podVolumeWarningOf } from './restore-claims.js';
import { awaitingVolume, renamedPersistentVolume } from './restore-objects.js';

type Json = Record<string, unknown>;

const record = (v: unknown): Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

export { VOLUME_SNAPSHOT_CONTENTS, VOLUME_SNAPSHOTS } from './restore-claims.js';

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

export function pvRestoreFactsOf(pv: Json): PvRestoreFacts {
  const spec = record(pv.spec);
  const claimNamespace = text(record(spec.claimRef).namespace);
  const reclaimPolicy = text(spec.persistentVolumeReclaimPolicy);
  return {
    name: text(record(pv.metadata).name),
    ...(claimNamespace ? { claimNamespace } : {}),
    ...(reclaimPolicy ? { reclaimPolicy } : {}),
    ebs: ebsVolumeIdOf(pv) !== undefined,
    ...(availabilityZoneOf(pv) ? { zone: availabilityZoneOf(pv) } : {}),
  };
}

/** Velero's decision for one backed-up PV (restore.go, by the volumes-info `backupMethod`). */
export function persistentVolumeAction(options: {
  pv: PvRestoreFacts;
  info?: BackupVolumeInfo;
  restorePVs?: boolean | null;
  namespaceMapping?: Readonly<Record<string, string>>;
  /** Whether a PV of this name exists in the target cluster. */
  exists: boolean;
  /** The request's zone for re-created volumes (Lifeboat), else the recorded one. */
  availabilityZone?: string;
  /** A new name for a PV that must be renamed (`velero-clone-<uuid>`). */
  cloneName: () => string;
  /** The request sends restored volumes to another region or account (volumeRegion, volumeAccountRoleArn). */
  elsewhere?: boolean;
}): PersistentVolumeAction {
  const { pv, info } = options;
  if (!info) return { action: 'restore', reason: 'the backup has no volume info for it' };
  if (info.snapshotDataMoved) return movedDataAction({ ...options, info });
  switch (info.backupMethod) {
    case 'NativeSnapshot':
      if (options.elsewhere)
        return {
          action: 'fail',
          reason:
            'a native snapshot is restored only in its own account and region: volumeRegion and volumeAccountRoleArn apply to volumes whose data was moved to the repository (snapshotMoveData)',
        };
      return nativeSnapshotAction({ ...options, info });
    case 'PodVolumeBackup':
      // Velero: the PVC is re-provisioned and its pod volume restore fills it.
      return filesOf(info)
        ? { action: 'reprovision', reason: 'it has a pod volume backup to be restored' }
        : {
            action: 'reprovision',
            reason: 'it has a pod volume backup to be restored',
            warning: podVolumeWarningOf(info),
          };
    case 'CSISnapshot':
      return { action: 'reprovision', reason: 'it has a related CSI VolumeSnapshot' };
    default: {
      const reclaimPolicy = pv.reclaimPolicy ?? info.pvInfo?.reclaimPolicy;
      return reclaimPolicy === 'Delete'
        ? { action: 'reprovision', reason: "it doesn't have a snapshot and its reclaim policy is Delete" }
        : { action: 'restore', reason: "it doesn't have a snapshot and its reclaim policy is not Delete" };
    }
  }
}

/** A volume whose snapshot data was moved: restored from the repository, as a native one is placed. */
interface VolumeActionOptions {
  readonly pv: PvRestoreFacts;
  readonly info: BackupVolumeInfo;
  readonly restorePVs?: boolean | null;
  readonly namespaceMapping?: Readonly<Record<string, string>>;
  readonly exists: boolean;
  readonly availabilityZone?: string;
  readonly cloneName: () => string;
}

/**
 * Where a volume with data to restore goes before any volume is made: kept as it is in the
 * cluster, restored unchanged (restorePVs false), or on, possibly under a clone name.
 */
function placement(
  options: VolumeActionOptions & { notRestored: string },
): { settled: PersistentVolumeAction } | { rename: { rename?: string } } {
  const { pv, exists } = options;
  // Velero shouldRenamePV: the claim's namespace is mapped and the PV exists in the cluster.
  const mapped =
    pv.claimNamespace !== undefined && options.namespaceMapping?.[pv.claimNamespace] !== undefined;
  const rename = mapped && exists ? { rename: options.cloneName() } : {};
  // Velero: an existing PV is kept (no orphaned volume, GH #609), unless it is renamed.
  if (exists && !mapped)
    return {
      settled: { action: 'restore', reason: 'it already exists in the cluster: no volume is created' },
    };
  // Velero's pvRestorer returns the PV unchanged: restored pointing at the backed-up volume.
  if (options.restorePVs === false)
    return {
      settled: { action: 'restore', reason: `restorePVs is false: ${options.notRestored}`, ...rename },
    };
  return { rename };
}

function movedDataAction(options: VolumeActionOptions): PersistentVolumeAction {
  const { pv, info } = options;
  const moved = info.snapshotDataMovementInfo;
  if (!moved || !movedByLifeboat(info))
    return {
      action: 'reprovision',
      reason: 'its data was moved by a data mover Lifeboat cannot read',
      warning: `its data was moved by data mover "${moved?.dataMover || 'velero'}" (${moved?.uploaderType || 'kopia'}), which Lifeboat cannot restore: the volume is re-provisioned empty`,
    };
  if (moved.Phase !== 'Completed' || !moved.snapshotHandle)
    return {
      action: 'fail',
      reason: `its data movement did not complete (phase ${moved.Phase || 'unknown'}): there is no data to restore`,
    };
  const placed = placement({ ...options, notRestored: 'no volume is restored from the repository' });
  if ('settled' in placed) return placed.settled;
  const { rename } = placed;
  if (!pv.ebs) return { action: 'fail', reason: 'it is neither an EBS CSI nor an in-tree EBS volume' };
  const native = info.nativeSnapshotInfo;
  const recorded = native?.volumeAZ || pv.zone || '';
  const zone = options.availabilityZone || recorded;
  if (!zone)
    return {
      action: 'fail',
      reason:
        'neither its backup nor the PV names an availability zone, and the restore names none (volumeAvailabilityZone)',
    };
  const iops = Number.parseInt(native?.iops ?? '0', 10);
  return {
    action: 'from-snapshot',
    source: {
      snapshotHandle: moved.retainedSnapshot ?? '',
      // The backed-up volume's type when the snapshot was native; the EBS CSI driver's default otherwise.
      volumeType: native?.volumeType || 'gp3',
      ...(iops > 0 ? { iops } : {}),
      availabilityZone: zone,
      recordedAvailabilityZone: recorded,
      movedData: {
        manifestId: moved.snapshotHandle,
        backupMethod: info.backupMethod === 'CSISnapshot' ? 'CSISnapshot' : 'NativeSnapshot',
        info: moved,
      },
    },
    ...rename,
  };
}

function nativeSnapshotAction(options: VolumeActionOptions): PersistentVolumeAction {
  const { pv, info } = options;
  const placed = placement({ ...options, notRestored: 'no volume is created from its snapshot' });
  if ('settled' in placed) return placed.settled;
  const { rename } = placed;
  const snapshot = info.nativeSnapshotInfo;
  if (!snapshot?.snapshotHandle) return { action: 'fail', reason: 'its native snapshot has no snapshot id' };
  if (!pv.ebs) return { action: 'fail', reason: 'it is neither an EBS CSI nor an in-tree EBS volume' };
  const zone = options.availabilityZone || snapshot.volumeAZ;
  if (!zone)
    return {
      action: 'fail',
      reason: 'its snapshot records no availability zone and the restore names none (volumeAvailabilityZone)',
    };
  const iops = Number.parseInt(snapshot.iops, 10);
  return {
    action: 'from-snapshot',
    source: {
      snapshotHandle: snapshot.snapshotHandle,
      volumeType: snapshot.volumeType,
      ...(iops > 0 ? { iops } : {}),
      availabilityZone: zone,
      recordedAvailabilityZone: snapshot.volumeAZ,
    },
    ...rename,
  };
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

const claimKey = (namespace: string, name: string): string => `${namespace}/${name}`;

/** Every PV and PVC of a restore, by the backup's volumes-info. */
export function planVolumeRestore(options: {
  infos: readonly BackupVolumeInfo[];
  pvs: readonly Json[];
  pvcs: readonly Json[];
  restorePVs?: boolean | null;
  namespaceMapping?: Readonly<Record<string, string>>;
  availabilityZone?: string;
  /** The request sends restored volumes to another region or account. */
  elsewhere?: boolean;
  /** PV names that exist in the target cluster. */
  existingPvs: ReadonlySet<string>;
  /** `namespace/name` of PVCs that exist in the target cluster (target namespaces). */
  existingPvcs: ReadonlySet<string>;
  names: {
    clone: (pvName: string) => string;
    /** The restored VolumeSnapshot (and content) of a PVC in its source namespace. */
    snapshot: (pvc: { namespace: string; name: string }) => string;
  };
}): VolumeRestorePlan {
  const mapping = options.namespaceMapping ?? {};
  const target = (namespace: string): string => mapping[namespace] ?? namespace;
  const byPv = new Map(options.infos.filter((i) => i.pvName).map((i) => [i.pvName ?? '', i]));
  const byClaim = new Map(
    options.infos.filter((i) => i.pvcName).map((i) => [claimKey(i.pvcNamespace ?? '', i.pvcName ?? ''), i]),
  );
  const plan: VolumeRestorePlan = {
    pvs: [],
    pvcs: [],
    snapshots: [],
    native: [],
    provisioned: [],
    restoreInfos: [],
    notes: [],
  };
  const actions = new Map<string, PersistentVolumeAction>();
  // Volumes whose restore entry is written (natives: once their volume exists).
  const recorded = new Set<BackupVolumeInfo>();
  const claimOfPv = new Map<string, { namespace: string; name: string }>();
  for (const pvc of options.pvcs) {
    const meta = record(pvc.metadata);
    const volumeName = text(record(pvc.spec).volumeName);
    if (volumeName) claimOfPv.set(volumeName, { namespace: text(meta.namespace), name: text(meta.name) });
  }

  for (const pv of options.pvs) {
    const facts = pvRestoreFactsOf(pv);
    const info = byPv.get(facts.name);
    const action = persistentVolumeAction({
      pv: facts,
      ...(info ? { info } : {}),
      ...(options.restorePVs !== undefined ? { restorePVs: options.restorePVs } : {}),
      namespaceMapping: mapping,
      exists: options.existingPvs.has(facts.name),
      ...(options.availabilityZone ? { availabilityZone: options.availabilityZone } : {}),
      ...(options.elsewhere ? { elsewhere: true } : {}),
      cloneName: () => options.names.clone(facts.name),
    });
    actions.set(facts.name, action);
    const note = (level: VolumeNote['level'], message: string): void => {
      plan.notes.push({ level, message, name: facts.name });
    };
    const renamed = (object: Json): Json =>
      'rename' in action && action.rename ? renamedPersistentVolume(object, action.rename) : object;
    const restoredName = ('rename' in action && action.rename) || facts.name;
    const claim = claimOfPv.get(facts.name) ?? claimOf(info);
    const claimNames = claim ? { pvcNamespace: target(claim.namespace), pvcName: claim.name } : {};
    switch (action.action) {
      case 'restore':
        plan.pvs.push(renamed(pv));
        if (info) {
          note('info', `Restoring persistent volume as-is because ${action.reason}`);
          plan.restoreInfos.push({ pvName: restoredName, ...claimNames, snapshotDataMoved: false });
          recorded.add(info);
        }
        break;
      case 'from-snapshot':
        plan.pvs.push(
          awaitingVolume(renamed(pv), {
            availabilityZone: action.source.availabilityZone,
            recordedZone: action.source.recordedAvailabilityZone,
          }),
        );
        plan.native.push({ ...action.source, pvName: restoredName, sourcePvName: facts.name, ...claimNames });
        if (info) recorded.add(info);
        note(
          'info',
          action.source.movedData
            ? `Restoring persistent volume from the data mover's repository (manifest ${action.source.movedData.manifestId})`
            : `Restoring persistent volume from snapshot ${action.source.snapshotHandle}`,
        );
        break;
      case 'reprovision':
        note('info', `Dynamically re-provisioning persistent volume because ${action.reason}`);
        if (action.warning) note('warning', `Persistent volume ${facts.name}: ${action.warning}`);
        break;
      case 'fail':
        note('error', `Persistent volume ${facts.name} is not restored: ${action.reason}`);
        break;
    }
  }

  const restoredClaims = new Set<BackupVolumeInfo>();
  for (const pvc of options.pvcs) {
    const meta = record(pvc.metadata);
    const source = { namespace: text(meta.namespace), name: text(meta.name) };
    const volumeName = text(record(pvc.spec).volumeName);
    const info =
      (volumeName ? byPv.get(volumeName) : undefined) ?? byClaim.get(claimKey(source.namespace, source.name));
    if (!info) {
      plan.pvcs.push(pvc);
      continue;
    }
    restoredClaims.add(info);
    plan.pvcs.push(
      claimForRestore({
        pvc,
        source,
        info,
        action: actions.get(volumeName),
        options,
        plan,
        recorded,
        target,
      }),
    );
  }

  // Every other volume whose PVC is restored: re-provisioned, so no restore method.
  for (const info of options.infos) {
    if (recorded.has(info) || !restoredClaims.has(info)) continue;
    plan.restoreInfos.push({
      pvcName: info.pvcName ?? '',
      pvcNamespace: target(info.pvcNamespace ?? ''),
      snapshotDataMoved: false,
    });
  }
  return plan;
}

function claimOf(info: BackupVolumeInfo | undefined): { namespace: string; name: string } | undefined {
  return info?.pvcName ? { namespace: info.pvcNamespace ?? '', name: info.pvcName } : undefined;
}
