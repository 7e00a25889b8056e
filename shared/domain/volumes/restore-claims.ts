/**
 * The PVC half of a volume restore (volumes/restore.ts): a PVC re-provisioned, bound to its renamed
 * PV, or filled from a pre-provisioned VolumeSnapshot as Velero's CSI PVC restore item action
 * does, with the objects, notes and restore volume info that come with it. Pure.
 */

import { FILE_UPLOADER, movedByLifeboat } from './data-movement.js';
import type { BackupVolumeInfo, CSISnapshotInfo } from './info-shapes.js';
import {
  claimFromSnapshot,
  claimOfRenamedVolume,
  emptyClaim,
  reprovisionedClaim,
  volumeSnapshotContentOf,
  volumeSnapshotOf,
} from './restore-objects.js';
import type { PersistentVolumeAction, VolumeNote, VolumeRestorePlan } from './restore-plan.js';

import { snapshotCopyFor, type VolumeHome } from './snapshot-copies.js';

type Json = Record<string, unknown>;

const record = (v: unknown): Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};
const text = (v: unknown): string => (typeof v === 'string' ? v : '');
const claimKey = (namespace: string, name: string): string => `${namespace}/${name}`;

export const VOLUME_SNAPSHOT_CONTENTS = 'volumesnapshotcontents.snapshot.storage.k8s.io';
export const VOLUME_SNAPSHOTS = 'volumesnapshots.snapshot.storage.k8s.io';

/** Said of a pod volume backup Velero made (kopia or restic): Lifeboat cannot read its repository. */
export const PVB_WARNING =
  "its pod volume backup was made by Velero's node agent, whose repository Lifeboat cannot read: the volume is re-provisioned empty";

/** Why a pod volume backup's data does not come back: Velero made it, or Lifeboat's did not complete. */
export function podVolumeWarningOf(info: BackupVolumeInfo): string {
  return info.pvbInfo?.uploaderType === FILE_UPLOADER
    ? `its file backup did not complete (phase ${info.pvbInfo.Phase || 'unknown'}): the volume is re-provisioned empty`
    : PVB_WARNING;
}

/** The repository manifest of a volume Lifeboat's data mover backed up file by file, if completed. */
export function filesOf(
  info: BackupVolumeInfo,
): { manifestId: string; podName: string; volumeName: string } | undefined {
  const pvb = info.pvbInfo;
  if (info.backupMethod !== 'PodVolumeBackup' || pvb?.uploaderType !== FILE_UPLOADER) return undefined;
  return pvb.Phase === 'Completed' && pvb.snapshotHandle
    ? { manifestId: pvb.snapshotHandle, podName: pvb.podName, volumeName: pvb.volumeName }
    : undefined;
}

/** Whether the volumes-info alone says the PVC's volume is re-provisioned (its PV not restored). */
export function reprovisionedByInfo(info: BackupVolumeInfo): boolean {
  // A volume Lifeboat's data mover moved gets its PV back, pointed at a volume from the repository.
  if (movedByLifeboat(info)) return false;
  if (info.backupMethod === 'PodVolumeBackup' || info.backupMethod === 'CSISnapshot') return true;
  return info.backupMethod === undefined && info.pvInfo?.reclaimPolicy === 'Delete';
}

/** A backed-up PVC with what the restore knows of its volume, and where the plan's parts go. */
export interface ClaimRestoreInput {
  readonly pvc: Json;
  readonly source: { namespace: string; name: string };
  readonly info: BackupVolumeInfo;
  readonly action: PersistentVolumeAction | undefined;
  readonly options: {
    restorePVs?: boolean | null;
    /** The restore's volumes land in another account or region (`home`): CSI snapshots need their copy there. */
    elsewhere?: boolean;
    home?: VolumeHome;
    existingPvcs: ReadonlySet<string>;
    names: { snapshot: (pvc: { namespace: string; name: string }) => string };
  };
  readonly plan: VolumeRestorePlan;
  readonly recorded: Set<BackupVolumeInfo>;
  readonly target: (namespace: string) => string;
}

/**
 * The PVC as restored (none when it cannot be); its notes, snapshots, re-provisioned volume and
 * restore info go into the plan.
 */
export function claimForRestore(input: ClaimRestoreInput): Json | undefined {
  const claim = claimRestoreOf(input);
  if (input.info.backupMethod === 'CSISnapshot' && !movedByLifeboat(input.info))
    return csiSnapshotClaim(claim);
  return claimOfRestoredVolume(claim);
}

/** One PVC being restored: its target namespace, whether it exists there, its files, and its plan entries. */
interface ClaimRestore {
  readonly input: ClaimRestoreInput;
  readonly exists: boolean;
  readonly files: ReturnType<typeof filesOf>;
  readonly note: (level: VolumeNote['level'], message: string) => void;
  /** Records the volume to patch once the PVC is bound (when backed up with a PV, and not existing). */
  readonly provisioned: () => void;
  readonly namespace: string;
}

function claimRestoreOf(input: ClaimRestoreInput): ClaimRestore {
  const { source, info, plan } = input;
  const namespace = input.target(source.namespace);
  const exists = input.options.existingPvcs.has(claimKey(namespace, source.name));
  const files = filesOf(info);
  return {
    input,
    namespace,
    exists,
    files,
    note: (level, message) => {
      plan.notes.push({ level, message, namespace, name: source.name });
    },
    provisioned: () => {
      if (info.pvInfo && !exists)
        plan.provisioned.push({
          pvcNamespace: namespace,
          pvcName: source.name,
          ...(info.pvName ? { sourcePvName: info.pvName } : {}),
          pvInfo: info.pvInfo,
          ...(files ? { files } : {}),
        });
    },
  };
}

/** Velero's CSI PVC restore item action: the PVC fills from a pre-provisioned VolumeSnapshot. */
function csiSnapshotClaim(claim: ClaimRestore): Json | undefined {
  const { pvc, info, options } = claim.input;
  // Velero's CSI PVC action leaves an existing PVC alone.
  if (claim.exists) return pvc;
  if (options.restorePVs === false) {
    claim.note(
      'info',
      'Restore did not request for PVs to be restored from snapshot: the PVC gets an empty volume',
    );
    claim.provisioned();
    return emptyClaim(pvc);
  }
  const csi = info.csiSnapshotInfo;
  if (info.snapshotDataMoved || !csi?.snapshotHandle) {
    claim.note(
      'warning',
      info.snapshotDataMoved
        ? 'its snapshot data was moved by a data mover, which cannot restore yet: the volume is re-provisioned empty'
        : 'its CSI snapshot has no snapshot handle: the volume is re-provisioned empty',
    );
    claim.provisioned();
    return emptyClaim(pvc);
  }
  const copy = options.elsewhere ? snapshotCopyFor(info, options.home ?? {}) : undefined;
  if (copy && 'reason' in copy) {
    // Lifeboat: a snapshot cannot leave its account and region; the PVC would never bind.
    claim.note('error', `PersistentVolumeClaim ${claim.input.source.name} is not restored: ${copy.reason}`);
    claim.input.recorded.add(info);
    return undefined;
  }
  const name = preProvisionedSnapshot(claim, copy ? { ...csi, snapshotHandle: copy.snapshotHandle } : csi);
  claim.note('info', `Restoring the PVC from VolumeSnapshot ${name}`);
  claim.provisioned();
  return claimFromSnapshot(pvc, { volumeSnapshotName: name, sizeBytes: csi.size });
}

/** The VolumeSnapshotContent and VolumeSnapshot the PVC fills from, and its restore info; their name. */
function preProvisionedSnapshot(claim: ClaimRestore, csi: CSISnapshotInfo): string {
  const { source, info, options, plan } = claim.input;
  const { namespace } = claim;
  const name = options.names.snapshot(source);
  plan.snapshots.push(
    {
      groupResource: VOLUME_SNAPSHOT_CONTENTS,
      object: volumeSnapshotContentOf({
        name,
        snapshotHandle: csi.snapshotHandle,
        driver: csi.driver,
        namespace,
      }),
    },
    { groupResource: VOLUME_SNAPSHOTS, object: volumeSnapshotOf({ name, namespace: source.namespace }) },
  );
  claim.input.recorded.add(info);
  plan.restoreInfos.push({
    pvcName: source.name,
    pvcNamespace: namespace,
    restoreMethod: 'CSISnapshot',
    snapshotDataMoved: false,
    csiSnapshotInfo: {
      snapshotHandle: csi.snapshotHandle,
      size: csi.size,
      driver: csi.driver,
      vscName: name,
      ReadyToUse: null,
    },
  });
  return name;
}

/** A PVC whose PV is re-provisioned (reset for dynamic provisioning), renamed, or restored as it is. */
function claimOfRestoredVolume(claim: ClaimRestore): Json {
  const { pvc, info, action } = claim.input;
  const volumeName = text(record(pvc.spec).volumeName);
  const reprovisioned = action ? action.action === 'reprovision' : reprovisionedByInfo(info);
  noteVolumeData(claim);
  if (reprovisioned && volumeName) {
    claim.note('info', 'Resetting PersistentVolumeClaim for dynamic provisioning');
    claim.provisioned();
    return reprovisionedClaim(pvc);
  }
  if (action && 'rename' in action && action.rename) {
    claim.note(
      'info',
      `Updating the PVC to reference renamed persistent volume (${volumeName} -> ${action.rename})`,
    );
    return claimOfRenamedVolume(pvc, action.rename);
  }
  return pvc;
}

/** What becomes of the volume's data: a pod volume backup's warning, and where its files go. */
function noteVolumeData(claim: ClaimRestore): void {
  const { info, action } = claim.input;
  const { files, exists, note } = claim;
  // Its PV is not part of this restore, so the PV's own warning was not given.
  if (!action && info.backupMethod === 'PodVolumeBackup' && !exists && !files)
    note('warning', podVolumeWarningOf(info));
  if (files && exists)
    note(
      'warning',
      `the PVC exists already: the files of manifest ${files.manifestId} are not restored into it`,
    );
  else if (files && !info.pvInfo)
    note('warning', `its files (manifest ${files.manifestId}) are not restored: the backup has no PV of it`);
  else if (files)
    note(
      'info',
      `Its files are restored from the repository (manifest ${files.manifestId}) once the PVC is bound`,
    );
}
