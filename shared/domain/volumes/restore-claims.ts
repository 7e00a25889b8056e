/**
 * The PVC half of a volume restore (volumes/restore.ts): a PVC re-provisioned, bound to its renamed
 * PV, or filled from a pre-provisioned VolumeSnapshot as Velero's CSI PVC restore item action
 * does, with the objects, notes and restore volume info that come with it. Pure.
 */

import { FILE_UPLOADER, movedByLifeboat } from './data-movement.js';
import type { BackupVolumeInfo } from './info-shapes.js';
import {
  claimFromSnapshot,
  claimOfRenamedVolume,
  emptyClaim,
  reprovisionedClaim,
  volumeSnapshotContentOf,
  volumeSnapshotOf,
} from './restore-objects.js';
import type { PersistentVolumeAction, VolumeNote, VolumeRestorePlan } from './restore-plan.js';

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

export function claimForRestore(input: {
  pvc: Json;
  source: { namespace: string; name: string };
  info: BackupVolumeInfo;
  action: PersistentVolumeAction | undefined;
  options: {
    restorePVs?: boolean | null;
    existingPvcs: ReadonlySet<string>;
    names: { snapshot: (pvc: { namespace: string; name: string }) => string };
  };
  plan: VolumeRestorePlan;
  recorded: Set<BackupVolumeInfo>;
  target: (namespace: string) => string;
}): Json {
  const { pvc, source, info, action, options, plan } = input;
  const namespace = input.target(source.namespace);
  const note = (level: VolumeNote['level'], message: string): void => {
    plan.notes.push({ level, message, namespace, name: source.name });
  };
  const exists = options.existingPvcs.has(claimKey(namespace, source.name));
  const files = filesOf(info);
  const provisioned = (): void => {
    if (info.pvInfo && !exists)
      plan.provisioned.push({
        pvcNamespace: namespace,
        pvcName: source.name,
        ...(info.pvName ? { sourcePvName: info.pvName } : {}),
        pvInfo: info.pvInfo,
        ...(files ? { files } : {}),
      });
  };
  if (info.backupMethod === 'CSISnapshot' && !movedByLifeboat(info)) {
    // Velero's CSI PVC action leaves an existing PVC alone.
    if (exists) return pvc;
    if (options.restorePVs === false) {
      note(
        'info',
        'Restore did not request for PVs to be restored from snapshot: the PVC gets an empty volume',
      );
      provisioned();
      return emptyClaim(pvc);
    }
    const csi = info.csiSnapshotInfo;
    if (info.snapshotDataMoved || !csi?.snapshotHandle) {
      note(
        'warning',
        info.snapshotDataMoved
          ? 'its snapshot data was moved by a data mover, which cannot restore yet: the volume is re-provisioned empty'
          : 'its CSI snapshot has no snapshot handle: the volume is re-provisioned empty',
      );
      provisioned();
      return emptyClaim(pvc);
    }
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
    input.recorded.add(info);
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
    note('info', `Restoring the PVC from VolumeSnapshot ${name}`);
    provisioned();
    return claimFromSnapshot(pvc, { volumeSnapshotName: name, sizeBytes: csi.size });
  }
  const volumeName = text(record(pvc.spec).volumeName);
  const reprovisioned = action ? action.action === 'reprovision' : reprovisionedByInfo(info);
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
  if (reprovisioned && volumeName) {
    note('info', 'Resetting PersistentVolumeClaim for dynamic provisioning');
    provisioned();
    return reprovisionedClaim(pvc);
  }
  if (action && 'rename' in action && action.rename) {
    note(
      'info',
      `Updating the PVC to reference renamed persistent volume (${volumeName} -> ${action.rename})`,
    );
    return claimOfRenamedVolume(pvc, action.rename);
  }
  return pvc;
}
