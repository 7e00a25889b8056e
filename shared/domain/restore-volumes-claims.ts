/**
 * The PVC half of a volume restore (restore-volumes): a PVC re-provisioned, bound to its renamed
 * PV, or filled from a pre-provisioned VolumeSnapshot as Velero's CSI PVC restore item action
 * does, with the objects, notes and restore volume info that come with it. Pure.
 */

import { movedByLifeboat } from './data-movement.js';
import type { PersistentVolumeAction, VolumeNote, VolumeRestorePlan } from './restore-volumes.js';
import {
  claimFromSnapshot,
  claimOfRenamedVolume,
  emptyClaim,
  reprovisionedClaim,
  volumeSnapshotContentOf,
  volumeSnapshotOf,
} from './restore-volumes-objects.js';
import type { BackupVolumeInfo } from './volume-info-shapes.js';

type Json = Record<string, unknown>;

const record = (v: unknown): Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};
const text = (v: unknown): string => (typeof v === 'string' ? v : '');
const claimKey = (namespace: string, name: string): string => `${namespace}/${name}`;

export const VOLUME_SNAPSHOT_CONTENTS = 'volumesnapshotcontents.snapshot.storage.k8s.io';
export const VOLUME_SNAPSHOTS = 'volumesnapshots.snapshot.storage.k8s.io';

export const PVB_WARNING =
  'its pod volume backup data cannot be restored yet (no data mover): the volume is re-provisioned empty';

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
  const provisioned = (): void => {
    if (info.pvInfo && !exists)
      plan.provisioned.push({
        pvcNamespace: namespace,
        pvcName: source.name,
        ...(info.pvName ? { sourcePvName: info.pvName } : {}),
        pvInfo: info.pvInfo,
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
  if (!action && info.backupMethod === 'PodVolumeBackup' && !exists) note('warning', PVB_WARNING);
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
