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
import type {
  PersistentVolumeAction,
  PvRestoreFacts,
  VolumeNote,
  VolumeRestorePlan,
} from './restore-plan.js';
import type { VolumeHome } from './snapshot-copies.js';

type Json = Record<string, unknown>;

const record = (v: unknown): Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

const claimKey = (namespace: string, name: string): string => `${namespace}/${name}`;

/** What a restore asks of its volumes, with what the backup holds and the target cluster has. */
export interface VolumeRestoreRequest {
  readonly infos: readonly BackupVolumeInfo[];
  readonly pvs: readonly Json[];
  readonly pvcs: readonly Json[];
  readonly restorePVs?: boolean | null;
  readonly namespaceMapping?: Readonly<Record<string, string>>;
  readonly availabilityZone?: string;
  /** The request sends restored volumes to another region or account. */
  readonly elsewhere?: boolean;
  /** Where restored volumes land when elsewhere: native and CSI snapshots come back from their copies there. */
  readonly home?: VolumeHome;
  /** PV names that exist in the target cluster. */
  readonly existingPvs: ReadonlySet<string>;
  /** `namespace/name` of PVCs that exist in the target cluster (target namespaces). */
  readonly existingPvcs: ReadonlySet<string>;
  readonly names: {
    clone: (pvName: string) => string;
    /** The restored VolumeSnapshot (and content) of a PVC in its source namespace. */
    snapshot: (pvc: { namespace: string; name: string }) => string;
  };
}

/** Every PV and PVC of a restore, by the backup's volumes-info. */
export function planVolumeRestore(options: VolumeRestoreRequest): VolumeRestorePlan {
  const planning = planningOf(options);
  for (const pv of options.pvs) planPersistentVolume(planning, pv);
  const restoredClaims = new Set<BackupVolumeInfo>();
  for (const pvc of options.pvcs) {
    const info = planClaim(planning, pvc);
    if (info) restoredClaims.add(info);
  }
  // Every other volume whose PVC is restored: re-provisioned, so no restore method.
  for (const info of options.infos) {
    if (planning.recorded.has(info) || !restoredClaims.has(info)) continue;
    planning.plan.restoreInfos.push({
      pvcName: info.pvcName ?? '',
      pvcNamespace: planning.target(info.pvcNamespace ?? ''),
      snapshotDataMoved: false,
    });
  }
  return planning.plan;
}

/** The plan being built, with the lookups each PV and PVC is planned by. */
interface Planning {
  readonly request: VolumeRestoreRequest;
  readonly plan: VolumeRestorePlan;
  readonly mapping: Readonly<Record<string, string>>;
  readonly target: (namespace: string) => string;
  readonly byPv: ReadonlyMap<string, BackupVolumeInfo>;
  readonly byClaim: ReadonlyMap<string, BackupVolumeInfo>;
  /** The backed-up PVC bound to each PV, by its `spec.volumeName`. */
  readonly claimOfPv: ReadonlyMap<string, { namespace: string; name: string }>;
  /** What happens to each backed-up PV, by its name. */
  readonly actions: Map<string, PersistentVolumeAction>;
  /** Volumes whose restore entry is written (natives: once their volume exists). */
  readonly recorded: Set<BackupVolumeInfo>;
}

function planningOf(request: VolumeRestoreRequest): Planning {
  const mapping = request.namespaceMapping ?? {};
  const byPv = new Map(request.infos.filter((i) => i.pvName).map((i) => [i.pvName ?? '', i]));
  const byClaim = new Map(
    request.infos.filter((i) => i.pvcName).map((i) => [claimKey(i.pvcNamespace ?? '', i.pvcName ?? ''), i]),
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
  const claimOfPv = new Map<string, { namespace: string; name: string }>();
  for (const pvc of request.pvcs) {
    const meta = record(pvc.metadata);
    const volumeName = text(record(pvc.spec).volumeName);
    if (volumeName) claimOfPv.set(volumeName, { namespace: text(meta.namespace), name: text(meta.name) });
  }
  return {
    request,
    plan,
    mapping,
    target: (namespace) => mapping[namespace] ?? namespace,
    byPv,
    byClaim,
    claimOfPv,
    actions: new Map(),
    recorded: new Set(),
  };
}

/** Decides what happens to one backed-up PV and writes it into the plan. */
function planPersistentVolume(planning: Planning, pv: Json): void {
  const { request } = planning;
  const facts = pvRestoreFactsOf(pv);
  const info = planning.byPv.get(facts.name);
  const action = persistentVolumeAction({
    pv: facts,
    ...(info ? { info } : {}),
    ...(request.restorePVs !== undefined ? { restorePVs: request.restorePVs } : {}),
    namespaceMapping: planning.mapping,
    exists: request.existingPvs.has(facts.name),
    ...(request.availabilityZone ? { availabilityZone: request.availabilityZone } : {}),
    ...(request.elsewhere ? { elsewhere: true } : {}),
    ...(request.home ? { home: request.home } : {}),
    cloneName: () => request.names.clone(facts.name),
  });
  planning.actions.set(facts.name, action);
  recordPersistentVolume(planning, { pv, facts, info, action });
}

/** The PV restored as it is or from its snapshot (with its restore info), or why it is not. */
function recordPersistentVolume(
  planning: Planning,
  decided: {
    pv: Json;
    facts: PvRestoreFacts;
    info: BackupVolumeInfo | undefined;
    action: PersistentVolumeAction;
  },
): void {
  const { pv, facts, info, action } = decided;
  const { plan } = planning;
  const note = (level: VolumeNote['level'], message: string): void => {
    plan.notes.push({ level, message, name: facts.name });
  };
  const renamed = (object: Json): Json =>
    'rename' in action && action.rename ? renamedPersistentVolume(object, action.rename) : object;
  const restoredName = ('rename' in action && action.rename) || facts.name;
  const claim = planning.claimOfPv.get(facts.name) ?? claimOf(info);
  const claimNames = claim ? { pvcNamespace: planning.target(claim.namespace), pvcName: claim.name } : {};
  switch (action.action) {
    case 'restore':
      plan.pvs.push(renamed(pv));
      if (info) {
        note('info', `Restoring persistent volume as-is because ${action.reason}`);
        plan.restoreInfos.push({ pvName: restoredName, ...claimNames, snapshotDataMoved: false });
        planning.recorded.add(info);
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
      if (info) planning.recorded.add(info);
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

/** Writes one backed-up PVC into the plan; the volume info it is restored by, if any. */
function planClaim(planning: Planning, pvc: Json): BackupVolumeInfo | undefined {
  const meta = record(pvc.metadata);
  const source = { namespace: text(meta.namespace), name: text(meta.name) };
  const volumeName = text(record(pvc.spec).volumeName);
  const info =
    (volumeName ? planning.byPv.get(volumeName) : undefined) ??
    planning.byClaim.get(claimKey(source.namespace, source.name));
  if (!info) {
    planning.plan.pvcs.push(pvc);
    return undefined;
  }
  const restored = claimForRestore({
    pvc,
    source,
    info,
    action: planning.actions.get(volumeName),
    options: planning.request,
    plan: planning.plan,
    recorded: planning.recorded,
    target: planning.target,
  });
  if (restored) planning.plan.pvcs.push(restored);
  return info;
}

function claimOf(info: BackupVolumeInfo | undefined): { namespace: string; name: string } | undefined {
  return info?.pvcName ? { namespace: info.pvcNamespace ?? '', name: info.pvcName } : undefined;
}
