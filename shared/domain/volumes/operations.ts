/**
 * Asynchronous volume operations of a backup (native EBS snapshots, CSI VolumeSnapshots): where
 * one stands after a look at the cloud or the cluster, when it has waited too long, and the
 * `<backup>-itemoperations.json.gz` record Velero writes for it (`pkg/itemoperation`).
 * Unlike Velero, whose AWS plugin marks an EBS snapshot Completed at once, Lifeboat waits for
 * `completed` (or `error`, or itemOperationTimeout). CSI follows Velero's
 * VolumeSnapshotBackupItemAction.Progress: ready when the VolumeSnapshot and its content are
 * readyToUse; a VolumeSnapshot error is temporary, a VolumeSnapshotContent error is final.
 * Pure: the caller passes the time; never does I/O, never throws.
 */
import { formatDuration } from '../kubernetes/duration.js';
import { kubeTime } from './info-shapes.js';

export type OperationPhase = 'New' | 'InProgress' | 'Completed' | 'Failed';

/** Velero's ResourceIdentifier: embedded GroupResource and plain fields, no json tags. */
export interface ResourceIdentifier {
  readonly Group: string;
  readonly Resource: string;
  readonly Namespace: string;
  readonly Name: string;
}

export interface CsiSnapshotFacts {
  readonly vscName?: string;
  readonly snapshotHandle?: string;
  readonly size?: number;
  readonly driver?: string;
  readonly readyToUse?: boolean | null;
}

/** Velero's OperationStatus, plus the CSI facts the volumes-info entry needs. */
export interface OperationStatus {
  readonly phase: OperationPhase;
  readonly error?: string;
  readonly nCompleted?: number;
  readonly nTotal?: number;
  readonly operationUnits?: string;
  readonly description?: string;
  readonly created?: string;
  readonly started?: string;
  readonly updated?: string;
  readonly csi?: CsiSnapshotFacts;
}

export interface VolumeOperationSpec {
  readonly operationId: string;
  readonly method: 'native' | 'csi';
  readonly backupItemAction: string;
  readonly resource: ResourceIdentifier;
  readonly postOperationItems: readonly ResourceIdentifier[];
  readonly createdAt: string;
}

/** Lifeboat's name for the EBS snapshotter in the operations file (no Velero plugin does this). */
export const EBS_SNAPSHOT_ACTION = 'lifeboat.io/ebs-volume-snapshotter';
/** Velero's CSI VolumeSnapshot action, which owns the wait for readyToUse. */
export const CSI_SNAPSHOT_ACTION = 'velero.io/csi-volumesnapshot-backupper';
/** Velero's words when an operation outlives its timeout (backup_operations_controller.go). */
export const TIMED_OUT = 'Asynchronous action timed out';

export const isSettled = (status: OperationStatus): boolean =>
  status.phase === 'Completed' || status.phase === 'Failed';

/** A new operation, as the worker that started it leaves it. */
export function startedStatus(operation: VolumeOperationSpec): OperationStatus {
  const at = kubeTime(operation.createdAt);
  return { phase: 'New', created: at, started: at };
}

function timedOut(options: {
  operation: VolumeOperationSpec;
  now: Date;
  timeoutMs: number;
  setting: string;
}): string | undefined {
  const waited = options.now.getTime() - new Date(options.operation.createdAt).getTime();
  return waited > options.timeoutMs
    ? `${TIMED_OUT} (${options.setting} ${formatDuration(options.timeoutMs)})`
    : undefined;
}

export interface EbsSnapshotLook {
  readonly state: 'pending' | 'completed' | 'error' | 'recoverable' | 'recovering';
  readonly percent?: number;
  readonly stateMessage?: string;
  readonly startTime?: Date | string;
}

/** Where an EBS snapshot operation stands after one DescribeSnapshots. */
export function ebsOperationStatus(options: {
  operation: VolumeOperationSpec;
  previous: OperationStatus;
  look: EbsSnapshotLook;
  now: Date;
  /** itemOperationTimeout. */
  timeoutMs: number;
}): OperationStatus {
  const { operation, previous, look, now } = options;
  const base: OperationStatus = {
    ...previous,
    ...(look.startTime ? { started: kubeTime(look.startTime) } : {}),
    operationUnits: '%',
    nTotal: 100,
    nCompleted: look.state === 'completed' ? 100 : (look.percent ?? previous.nCompleted ?? 0),
    description: look.state,
    updated: kubeTime(now),
  };
  if (look.state === 'completed') return { ...base, phase: 'Completed' };
  if (look.state === 'error') {
    return {
      ...base,
      phase: 'Failed',
      error: `EBS snapshot ${operation.operationId} failed${look.stateMessage ? `: ${look.stateMessage}` : ''}`,
    };
  }
  const late = timedOut({ operation, now, timeoutMs: options.timeoutMs, setting: 'itemOperationTimeout' });
  return late ? { ...base, phase: 'Failed', error: late } : { ...base, phase: 'InProgress' };
}

export interface VolumeSnapshotLook {
  /** False when the VolumeSnapshot is gone. */
  readonly exists: boolean;
  readonly readyToUse?: boolean | null;
  readonly error?: string;
  readonly boundContentName?: string;
  readonly restoreSize?: number;
}

export interface VolumeSnapshotContentLook {
  readonly readyToUse?: boolean | null;
  readonly error?: string;
  readonly snapshotHandle?: string;
  readonly restoreSize?: number;
  readonly driver?: string;
  readonly deletionPolicy?: string;
}

/** Where a CSI VolumeSnapshot operation stands after reading it and its content. */
export function csiOperationStatus(options: {
  operation: VolumeOperationSpec;
  previous: OperationStatus;
  snapshot: VolumeSnapshotLook;
  content?: VolumeSnapshotContentLook;
  now: Date;
  /** csiSnapshotTimeout. */
  timeoutMs: number;
}): OperationStatus {
  const { operation, previous, snapshot, content, now } = options;
  const csi: CsiSnapshotFacts = {
    ...previous.csi,
    ...(snapshot.boundContentName ? { vscName: snapshot.boundContentName } : {}),
    ...(content?.snapshotHandle ? { snapshotHandle: content.snapshotHandle } : {}),
    ...(content?.driver ? { driver: content.driver } : {}),
    ...((snapshot.restoreSize ?? content?.restoreSize) !== undefined
      ? { size: snapshot.restoreSize ?? content?.restoreSize }
      : {}),
    readyToUse: snapshot.readyToUse ?? null,
  };
  const base: OperationStatus = { ...previous, updated: kubeTime(now), csi };
  const name = `${operation.resource.Namespace}/${operation.resource.Name}`;
  if (!snapshot.exists) return { ...base, phase: 'Failed', error: `VolumeSnapshot ${name} no longer exists` };
  if (content?.error) {
    return { ...base, phase: 'Failed', description: 'Failed', error: content.error };
  }
  if (snapshot.readyToUse === true && content?.readyToUse === true) {
    return { ...base, phase: 'Completed', description: 'ReadyToUse' };
  }
  const late = timedOut({ operation, now, timeoutMs: options.timeoutMs, setting: 'csiSnapshotTimeout' });
  if (late) {
    return {
      ...base,
      phase: 'Failed',
      error: `${late} waiting for VolumeSnapshot ${name} to be readyToUse${snapshot.error ? ` (last error: ${snapshot.error})` : ''}`,
    };
  }
  // Velero: an error on the VolumeSnapshot is temporary; the snapshot controller retries.
  return {
    ...base,
    phase: 'InProgress',
    description: snapshot.error ? `retrying: ${snapshot.error}` : 'Waiting',
  };
}

/** Velero's BackupOperation (itemoperation/backup_operation.go; spec keys without json tags stay Go names). */
export interface BackupOperation {
  readonly spec: {
    readonly backupName: string;
    readonly backupUID: string;
    readonly backupItemAction: string;
    readonly ResourceIdentifier: ResourceIdentifier;
    readonly OperationID: string;
    readonly PostOperationItems: readonly ResourceIdentifier[] | null;
  };
  readonly status: Omit<OperationStatus, 'csi'>;
}

export function backupOperationOf(options: {
  backupName: string;
  backupUID: string;
  operation: VolumeOperationSpec;
  status: OperationStatus;
}): BackupOperation {
  const { operation } = options;
  const { csi: _csi, ...status } = options.status;
  // Go's omitempty drops zero numbers and empty strings.
  const kept = Object.fromEntries(
    Object.entries(status).filter(([, v]) => v !== undefined && v !== '' && v !== 0),
  ) as BackupOperation['status'];
  return {
    spec: {
      backupName: options.backupName,
      backupUID: options.backupUID,
      backupItemAction: operation.backupItemAction,
      ResourceIdentifier: operation.resource,
      OperationID: operation.operationId,
      PostOperationItems: operation.postOperationItems.length > 0 ? operation.postOperationItems : null,
    },
    status: kept,
  };
}

/**
 * Seconds until the next look: `base` at first, then growing with the time already waited
 * (a tenth of it, at most `max`), so a four-hour wait costs hundreds of state transitions, not
 * thousands.
 */
export function nextPollSeconds(options: { waitedMs: number; base: number; max?: number }): number {
  const max = options.max ?? 60;
  return Math.max(options.base, Math.min(max, Math.floor(options.waitedMs / 10_000)));
}
