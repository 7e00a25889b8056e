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
import type { BackupVolumeInfo } from './info-shapes.js';
import { persistentVolumeAction, pvRestoreFactsOf } from './pv-action.js';
import { claimForRestore } from './restore-claims.js';
import { awaitingVolume, renamedPersistentVolume } from './restore-objects.js';
import type { PersistentVolumeAction, VolumeNote, VolumeRestorePlan } from './restore-plan.js';

type Json = Record<string, unknown>;

const record = (v: unknown): Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

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
