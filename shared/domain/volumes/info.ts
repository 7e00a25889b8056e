/**
 * volumes-info assembly: exactly one entry per PVC/PV of a backup saying how its data was backed
 * up or why it was skipped, never a volume dropped: a native or CSI snapshot, its data moved into
 * the repository (snapshotMoveData, `snapshotDataMovementInfo`), its files read by the data mover
 * (fs-backup, `pvbInfo`), or skipped with the reason (an fs-backup volume whose files the data
 * mover cannot reach says why).
 * The JSON shapes themselves live in info-shapes.ts (re-exported here).
 * Pure: never reads a clock, never does I/O.
 */

import { BLOCK_UPLOADER, FILE_UPLOADER, LIFEBOAT_DATA_MOVER } from './data-movement.js';
import {
  type BackupVolumeInfo,
  type CSISnapshotInfo,
  kubeTime,
  type NativeVolumeSnapshot,
  nativeSnapshotInfoOf,
  type PVInfo,
} from './info-shapes.js';
import type { VolumeDecision } from './policy.js';
import { skippedBecause } from './skip-reason.js';

export * from './info-shapes.js';

const some = <K extends string, V>(key: K, value: V | undefined | ''): { [P in K]?: V } =>
  (value === undefined || value === '' ? {} : { [key]: value }) as { [P in K]?: V };

/** One PVC/PV of the backup: a PVC with its PV, a PVC alone (unbound), or a PV alone. */
export interface BackupVolume {
  readonly pvcNamespace?: string;
  readonly pvcName?: string;
  readonly pvName?: string;
  readonly pvInfo?: PVInfo;
}

export interface ClaimFacts {
  readonly namespace: string;
  readonly name: string;
  readonly volumeName?: string;
}

export interface PersistentVolumeFacts {
  readonly name: string;
  readonly claim?: { readonly namespace: string; readonly name: string };
  readonly reclaimPolicy?: string;
  readonly labels?: Readonly<Record<string, string>>;
}

type KubeObject = Readonly<Record<string, unknown>>;
const record = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

export function claimFactsOf(pvc: KubeObject): ClaimFacts {
  const meta = record(pvc.metadata);
  const volumeName = text(record(pvc.spec).volumeName);
  return { namespace: text(meta.namespace), name: text(meta.name), ...some('volumeName', volumeName) };
}

export function persistentVolumeFactsOf(pv: KubeObject): PersistentVolumeFacts {
  const meta = record(pv.metadata);
  const spec = record(pv.spec);
  const claimRef = record(spec.claimRef);
  const labels = Object.entries(record(meta.labels)).filter(
    (e): e is [string, string] => typeof e[1] === 'string',
  );
  return {
    name: text(meta.name),
    ...(text(claimRef.name)
      ? { claim: { namespace: text(claimRef.namespace), name: text(claimRef.name) } }
      : {}),
    ...some('reclaimPolicy', text(spec.persistentVolumeReclaimPolicy)),
    ...(labels.length > 0 ? { labels: Object.fromEntries(labels) } : {}),
  };
}

const claimKey = (namespace: string, name: string): string => `${namespace}/${name}`;

/**
 * The volumes of a backup: each PVC paired with the PV its `spec.volumeName` names (when that PV
 * is in the backup), then each PV no PVC took. A PV alone keeps its claimRef's PVC name unless
 * that PVC has its own entry, so no PVC and no PV is named by two entries.
 */
export function backupVolumesOf(options: {
  pvcs: readonly ClaimFacts[];
  pvs: readonly PersistentVolumeFacts[];
}): BackupVolume[] {
  const pvs = new Map(options.pvs.map((pv) => [pv.name, pv]));
  const usedPvs = new Set<string>();
  const claims = new Set<string>();
  const volumes: BackupVolume[] = [];
  for (const pvc of options.pvcs) {
    const key = claimKey(pvc.namespace, pvc.name);
    if (claims.has(key)) continue;
    claims.add(key);
    const pv = pvc.volumeName ? pvs.get(pvc.volumeName) : undefined;
    const pvName = pvc.volumeName && !usedPvs.has(pvc.volumeName) ? pvc.volumeName : undefined;
    if (pvName) usedPvs.add(pvName);
    volumes.push({
      pvcNamespace: pvc.namespace,
      pvcName: pvc.name,
      ...some('pvName', pvName),
      ...(pv && pvName ? { pvInfo: pvInfoOf(pv) } : {}),
    });
  }
  for (const pv of options.pvs) {
    if (usedPvs.has(pv.name)) continue;
    usedPvs.add(pv.name);
    const claim = pv.claim && !claims.has(claimKey(pv.claim.namespace, pv.claim.name)) ? pv.claim : undefined;
    volumes.push({
      ...(claim ? { pvcNamespace: claim.namespace, pvcName: claim.name } : {}),
      pvName: pv.name,
      pvInfo: pvInfoOf(pv),
    });
  }
  return volumes;
}

function pvInfoOf(pv: PersistentVolumeFacts): PVInfo {
  return { reclaimPolicy: pv.reclaimPolicy ?? '', labels: pv.labels ? { ...pv.labels } : null };
}

/** A native snapshot as the backup took it: Velero's record plus when it started and finished. */
export interface NativeSnapshotOutcome {
  readonly snapshot: NativeVolumeSnapshot;
  readonly startedAt?: Date | string;
  readonly completedAt?: Date | string;
}

/**
 * A CSI snapshot as the backup took it (Velero generateVolumeInfoForCSIVolumeSnapshot), with the
 * outcome of Lifeboat's wait for readyToUse.
 */
export interface CsiSnapshotOutcome {
  readonly info: CSISnapshotInfo;
  readonly succeeded: boolean;
  readonly startedAt?: Date | string;
  readonly completedAt?: Date | string;
}

/**
 * What the data mover did with one volume (Velero: a DataUpload, or a PodVolumeBackup for file
 * mode): the repository manifest it wrote, or why it failed.
 */
export interface DataMovementOutcome {
  readonly mode: 'block' | 'file';
  /** Velero's DataUpload phases Lifeboat ends in. */
  readonly phase: 'Completed' | 'Failed' | 'Canceled';
  /** The data-mover job: the item operation's id. */
  readonly operationId: string;
  /** The repository manifest (Velero: the repository's snapshot id); empty unless completed. */
  readonly manifestId: string;
  /** Bytes of the volume (block mode) or of its files (file mode). */
  readonly size: number;
  /** The EBS snapshot kept as the base of the volume's next incremental, if any. */
  readonly retainedSnapshot?: string;
  readonly startedAt?: Date | string;
  readonly completedAt?: Date | string;
  /** File mode: the pod volume read, and the pod's node. */
  readonly pod?: {
    readonly namespace: string;
    readonly name: string;
    readonly volumeName: string;
    readonly nodeName?: string;
  };
}

type VolumeNames = Pick<BackupVolumeInfo, 'pvcName' | 'pvcNamespace' | 'pvName'>;

/** Velero's startTimestamp and completionTimestamp, each when known. */
function timestampsOf(o: { startedAt?: Date | string; completedAt?: Date | string }): {
  startTimestamp?: string;
  completionTimestamp?: string;
} {
  return {
    ...(o.startedAt === undefined ? {} : { startTimestamp: kubeTime(o.startedAt) }),
    ...(o.completedAt === undefined ? {} : { completionTimestamp: kubeTime(o.completedAt) }),
  };
}

/**
 * The volumes-info entry of one volume: its native or CSI snapshot when one was taken, else skipped with
 * the reason (the decision's own, or why its chosen method did not run).
 */
export function backupVolumeInfoOf(options: {
  volume: BackupVolume;
  decision?: VolumeDecision;
  outcome?: NativeSnapshotOutcome;
  csiOutcome?: CsiSnapshotOutcome;
  movement?: DataMovementOutcome;
  /** Why fs-backup could not reach the volume's files. */
  filesUnreachable?: string;
}): BackupVolumeInfo {
  const { volume, outcome, csiOutcome, movement } = options;
  const names: VolumeNames = {
    ...some('pvcName', volume.pvcName),
    ...some('pvcNamespace', volume.pvcNamespace),
    ...some('pvName', volume.pvName),
  };
  const pvInfo = volume.pvInfo ? { pvInfo: volume.pvInfo } : {};
  if (movement?.mode === 'file') return podVolumeInfoOf({ names, movement, pvInfo });
  if (movement && (outcome || csiOutcome)) {
    return movedVolumeInfoOf({ names, movement, outcome, csiOutcome, pvInfo });
  }
  if (csiOutcome && !outcome) {
    return {
      ...names,
      backupMethod: 'CSISnapshot',
      snapshotDataMoved: false,
      // Velero keeps the CSI snapshot (VolumeSnapshotContent retained) as the backup's data.
      preserveLocalSnapshot: true,
      skipped: false,
      ...timestampsOf(csiOutcome),
      result: csiOutcome.succeeded ? 'succeeded' : 'failed',
      csiSnapshotInfo: csiOutcome.info,
      ...pvInfo,
    };
  }
  if (!outcome) {
    return {
      ...names,
      snapshotDataMoved: false,
      preserveLocalSnapshot: false,
      ...skippedBecause(options.decision, options.filesUnreachable),
      ...pvInfo,
    };
  }
  return nativeVolumeInfoOf({ names, outcome, pvInfo });
}

/** A native snapshot the backup keeps as the volume's data. */
function nativeVolumeInfoOf(options: {
  names: VolumeNames;
  outcome: NativeSnapshotOutcome;
  pvInfo: { pvInfo?: PVInfo };
}): BackupVolumeInfo {
  const { outcome } = options;
  const info = nativeSnapshotInfoOf(outcome.snapshot);
  return {
    ...options.names,
    backupMethod: 'NativeSnapshot',
    snapshotDataMoved: false,
    preserveLocalSnapshot: false,
    skipped: false,
    ...timestampsOf(outcome),
    // Velero: succeeded only when the snapshot's phase is Completed.
    result: info.Phase === 'Completed' ? 'succeeded' : 'failed',
    nativeSnapshotInfo: info,
    ...options.pvInfo,
  };
}

/**
 * Velero generateVolumeInfoFromDataUpload: the snapshot's method, snapshotDataMoved, and the
 * movement's phase and repository snapshot; the local snapshot is not part of the backup.
 */
function movedVolumeInfoOf(options: {
  names: VolumeNames;
  movement: DataMovementOutcome;
  /** The snapshot whose data was moved: native when there is one, else CSI. */
  outcome: NativeSnapshotOutcome | undefined;
  csiOutcome: CsiSnapshotOutcome | undefined;
  pvInfo: { pvInfo?: PVInfo };
}): BackupVolumeInfo {
  const { movement, outcome, csiOutcome } = options;
  const started = (outcome ?? csiOutcome)?.startedAt;
  const snapshot = outcome
    ? {
        backupMethod: 'NativeSnapshot' as const,
        nativeSnapshotInfo: nativeSnapshotInfoOf(outcome.snapshot),
      }
    : { backupMethod: 'CSISnapshot' as const, csiSnapshotInfo: (csiOutcome as CsiSnapshotOutcome).info };
  return {
    ...options.names,
    backupMethod: snapshot.backupMethod,
    snapshotDataMoved: true,
    preserveLocalSnapshot: false,
    skipped: false,
    ...timestampsOf({
      ...(started === undefined ? {} : { startedAt: started }),
      ...(movement.completedAt === undefined ? {} : { completedAt: movement.completedAt }),
    }),
    result: movement.phase === 'Completed' ? 'succeeded' : 'failed',
    // Velero's key order: csiSnapshotInfo, snapshotDataMovementInfo, nativeSnapshotInfo.
    ...('csiSnapshotInfo' in snapshot ? { csiSnapshotInfo: snapshot.csiSnapshotInfo } : {}),
    snapshotDataMovementInfo: {
      dataMover: LIFEBOAT_DATA_MOVER,
      uploaderType: BLOCK_UPLOADER,
      retainedSnapshot: movement.retainedSnapshot ?? '',
      snapshotHandle: movement.manifestId,
      operationID: movement.operationId,
      size: movement.size,
      Phase: movement.phase,
    },
    ...('nativeSnapshotInfo' in snapshot ? { nativeSnapshotInfo: snapshot.nativeSnapshotInfo } : {}),
    ...options.pvInfo,
  };
}

/** Velero generateVolumeInfoFromPVB, for a volume file mode read. */
function podVolumeInfoOf(options: {
  names: VolumeNames;
  movement: DataMovementOutcome;
  pvInfo: { pvInfo?: PVInfo };
}): BackupVolumeInfo {
  const { movement } = options;
  const pod = movement.pod ?? { namespace: '', name: '', volumeName: '' };
  return {
    ...options.names,
    backupMethod: 'PodVolumeBackup',
    snapshotDataMoved: false,
    preserveLocalSnapshot: false,
    skipped: false,
    ...timestampsOf(movement),
    result: movement.phase === 'Completed' ? 'succeeded' : 'failed',
    pvbInfo: {
      snapshotHandle: movement.manifestId,
      size: movement.size,
      uploaderType: FILE_UPLOADER,
      volumeName: pod.volumeName,
      podName: pod.name,
      podNamespace: pod.namespace,
      nodeName: pod.nodeName ?? '',
      Phase: movement.phase,
    },
    ...options.pvInfo,
  };
}

/** What the backup did with one volume, named by its PV and/or PVC. */
export interface HandledVolume {
  readonly pvName?: string;
  readonly pvcNamespace?: string;
  readonly pvcName?: string;
  readonly decision: VolumeDecision;
  readonly outcome?: NativeSnapshotOutcome;
  readonly csiOutcome?: CsiSnapshotOutcome;
  readonly movement?: DataMovementOutcome;
  readonly filesUnreachable?: string;
}

function names(volume: BackupVolume, handled: HandledVolume): boolean {
  if (volume.pvName && handled.pvName) return volume.pvName === handled.pvName;
  return (
    !!volume.pvcName &&
    volume.pvcName === handled.pvcName &&
    (volume.pvcNamespace ?? '') === (handled.pvcNamespace ?? '')
  );
}

/**
 * Exactly one volumes-info entry per volume of the backup, in the volumes' order. A volume no
 * record names is skipped with a reason saying so; a record naming no volume of the backup comes
 * back in `unmatched` for the caller to report. Among records naming one volume, the first with a
 * snapshot outcome (native or CSI) wins, else the first.
 */
export function assembleBackupVolumeInfos(options: {
  volumes: readonly BackupVolume[];
  handled: readonly HandledVolume[];
}): { infos: BackupVolumeInfo[]; unmatched: HandledVolume[] } {
  const matched = new Set<HandledVolume>();
  const infos = options.volumes.map((volume) => {
    const candidates = options.handled.filter((h) => names(volume, h));
    for (const c of candidates) matched.add(c);
    const chosen = candidates.find((c) => c.outcome || c.csiOutcome || c.movement) ?? candidates[0];
    return backupVolumeInfoOf({
      volume,
      ...(chosen ? { decision: chosen.decision } : {}),
      ...(chosen?.outcome ? { outcome: chosen.outcome } : {}),
      ...(chosen?.csiOutcome ? { csiOutcome: chosen.csiOutcome } : {}),
      ...(chosen?.movement ? { movement: chosen.movement } : {}),
      ...(chosen?.filesUnreachable ? { filesUnreachable: chosen.filesUnreachable } : {}),
    });
  });
  return { infos, unmatched: options.handled.filter((h) => !matched.has(h)) };
}
