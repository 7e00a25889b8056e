/**
 * Velero's decision for one backed-up PV (restore.go, PV handling by the volumes-info
 * `backupMethod`): restored as backed up, re-created from its snapshot or the data mover's
 * repository (possibly under a clone name), re-provisioned, or failed with the reason. Pure.
 */
import { movedByLifeboat } from './data-movement.js';
import { availabilityZoneOf, ebsVolumeIdOf } from './ebs-volume.js';
import type { BackupVolumeInfo } from './info-shapes.js';
import { filesOf, podVolumeWarningOf } from './restore-claims.js';
import type { PersistentVolumeAction, PvRestoreFacts } from './restore-plan.js';
import { snapshotCopyFor, type VolumeHome } from './snapshot-copies.js';

type Json = Record<string, unknown>;

const record = (v: unknown): Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

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
  /** Where they land then: a native snapshot comes back there only from its copy (copySnapshots). */
  home?: VolumeHome;
}): PersistentVolumeAction {
  const { pv, info } = options;
  if (!info) return { action: 'restore', reason: 'the backup has no volume info for it' };
  if (info.snapshotDataMoved) return inHomeRegion(movedDataAction({ ...options, info }), options);
  switch (info.backupMethod) {
    case 'NativeSnapshot': {
      if (!options.elsewhere) return nativeSnapshotAction({ ...options, info });
      // A snapshot cannot leave its account and region: only its copy there can be used.
      const copy = snapshotCopyFor(info, options.home ?? {});
      if ('reason' in copy) return { action: 'fail', reason: copy.reason };
      return inHomeRegion(
        nativeSnapshotAction({ ...options, info, snapshotHandle: copy.snapshotHandle }),
        options,
      );
    }
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

/**
 * A volume re-created elsewhere must be made in a zone of the region it lands in. The zone
 * recorded in the backup is its source region's: unless the restore names one
 * (volumeAvailabilityZone), the volume goes to the zone of the same letter there (us-east-1a →
 * us-west-2a), as a DR deployment restores without anyone naming zones.
 */
function inHomeRegion(
  action: PersistentVolumeAction,
  options: { elsewhere?: boolean; home?: VolumeHome; availabilityZone?: string },
): PersistentVolumeAction {
  const region = options.home?.region;
  if (!options.elsewhere || !region || action.action !== 'from-snapshot') return action;
  const zone = action.source.availabilityZone;
  // A zone of a region: `<region><letter>`, or a Local Zone `<region>-<place>-<n><letter>`.
  if (zone.startsWith(region) && /^([a-z]|-[a-z0-9-]+[a-z])$/.test(zone.slice(region.length))) return action;
  // A zone the restore names is taken as named, or refused; only the recorded one is carried over.
  const letter = options.availabilityZone ? undefined : /\d([a-z])$/.exec(zone)?.[1];
  if (letter) return { ...action, source: { ...action.source, availabilityZone: `${region}${letter}` } };
  return {
    action: 'fail',
    reason: `its volume is restored in region ${region}, and its availability zone ${zone} is not one of that region: name one (volumeAvailabilityZone)`,
  };
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

function nativeSnapshotAction(
  options: VolumeActionOptions & { snapshotHandle?: string },
): PersistentVolumeAction {
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
      snapshotHandle: options.snapshotHandle ?? snapshot.snapshotHandle,
      volumeType: snapshot.volumeType,
      ...(iops > 0 ? { iops } : {}),
      availabilityZone: zone,
      recordedAvailabilityZone: snapshot.volumeAZ,
    },
    ...rename,
  };
}
