/**
 * How a backup hands volume data to the data mover, and how a restore or a deletion finds it
 * again: the name of each repository manifest a backup writes (`<backup>_<volume>_<time>`, so the
 * manifests of one backup and those of one volume are found by listing the repository's
 * manifest keys, without reading them), the previous manifest of the same volume an incremental
 * is made against, and which EBS snapshot a finished snapshot operation left to read.
 * Pure: no clock, no I/O; never throws.
 */
import type { BackupVolumeInfo } from './info-shapes.js';
import type { OperationStatus, VolumeOperationSpec } from './operations.js';

/** `snapshotDataMovementInfo.dataMover` of what Lifeboat moved (Velero writes `velero`). */
export const LIFEBOAT_DATA_MOVER = 'lifeboat';
/** `uploaderType` of block mode (Velero: `kopia`), and of file mode in `pvbInfo`. */
export const BLOCK_UPLOADER = 'lifeboat-block';
export const FILE_UPLOADER = 'lifeboat-file';
/** The item operations file's `backupItemAction` for a data movement (Velero: the CSI PVC action). */
export const DATA_MOVER_ACTION = 'lifeboat.io/data-mover';

/** Manifest ids are object names (`[A-Za-z0-9][A-Za-z0-9._-]{0,199}`); backup names never hold `_`. */
const MANIFEST_ID = /^([a-z0-9][a-z0-9.-]{0,252})_([A-Za-z0-9.-]+)_(\d{8}T\d{6}Z)$/;
const MAX_ID = 200;
const STAMP_CHARS = 16;

/** `2025-01-02T03:04:05.678Z` → `20250102T030405Z`: sorts as time does. */
export function manifestStamp(at: string): string {
  const iso = new Date(at).toISOString();
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
}

/** FNV-1a, 64 bits, hex: a short stable digest of a long name (no crypto needed to tell names apart). */
function fnv64(text: string): string {
  let hash = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= BigInt(byte);
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash.toString(16).padStart(16, '0');
}

/**
 * What names a volume across backups in manifest ids: its EBS volume id (block mode), or
 * `pv.<name>` of the PV whose directory file mode reads, shortened with a digest when the id
 * would pass 200 characters.
 */
export function volumeKeyOf(
  volume: { readonly ebsVolumeId: string } | { readonly pvName: string },
  options: { readonly backupName: string },
): string {
  if ('ebsVolumeId' in volume) return volume.ebsVolumeId;
  const key = `pv.${volume.pvName}`;
  const room = MAX_ID - options.backupName.length - 2 - STAMP_CHARS;
  return key.length <= room ? key : `${key.slice(0, Math.max(1, room - 17))}.${fnv64(volume.pvName)}`;
}

/** The manifest (and data-mover job) id of one volume of one backup run. */
export function movedManifestId(options: {
  readonly backupName: string;
  readonly volumeKey: string;
  /** When the volume's snapshot (or file backup) started: a retried run of the backup gets a new id. */
  readonly at: string;
}): string {
  return `${options.backupName}_${options.volumeKey}_${manifestStamp(options.at)}`;
}

export interface MovedManifestName {
  readonly backupName: string;
  readonly volumeKey: string;
  readonly stamp: string;
}

export function parseMovedManifestId(id: string): MovedManifestName | undefined {
  const m = MANIFEST_ID.exec(id);
  return m ? { backupName: m[1] as string, volumeKey: m[2] as string, stamp: m[3] as string } : undefined;
}

/**
 * The manifest an incremental of `own` is made against: the newest other manifest of the same
 * volume not newer than `own` (a backup running at the same time may have finished first).
 */
export function parentManifestOf(options: {
  readonly manifestIds: readonly string[];
  readonly own: string;
}): string | undefined {
  const self = parseMovedManifestId(options.own);
  if (!self) return undefined;
  let best: { id: string; stamp: string } | undefined;
  for (const id of options.manifestIds) {
    const name = parseMovedManifestId(id);
    if (!name || id === options.own || name.volumeKey !== self.volumeKey || name.stamp > self.stamp) continue;
    if (!best || name.stamp > best.stamp || (name.stamp === best.stamp && id > best.id))
      best = { id, stamp: name.stamp };
  }
  return best?.id;
}

/** Every manifest a backup wrote (under any of its runs), by name. */
export function manifestIdsOfBackup(options: {
  readonly manifestIds: readonly string[];
  readonly backupName: string;
}): string[] {
  return options.manifestIds.filter((id) => parseMovedManifestId(id)?.backupName === options.backupName);
}

const EBS_SNAPSHOT_ID = /^snap-[0-9a-f]+$/;

/**
 * The EBS snapshot a completed snapshot operation left for the data mover: a native snapshot's
 * id, or a CSI snapshot's handle when its driver is ebs.csi.aws.com (the handle is the EBS
 * snapshot id). Otherwise why its data cannot be moved.
 */
export function snapshotToMove(options: {
  readonly operation: Pick<VolumeOperationSpec, 'method' | 'operationId'>;
  readonly status: Pick<OperationStatus, 'phase' | 'csi'>;
}): { readonly snapshotId: string } | { readonly refused: string } {
  const { operation, status } = options;
  if (status.phase !== 'Completed') return { refused: 'its snapshot did not complete' };
  const id = operation.method === 'native' ? operation.operationId : (status.csi?.snapshotHandle ?? '');
  if (EBS_SNAPSHOT_ID.test(id)) return { snapshotId: id };
  return {
    refused: id
      ? `its snapshot handle ${id} is not an EBS snapshot id, which the data mover reads`
      : 'its CSI snapshot recorded no snapshot handle',
  };
}

/** Where one volume's data movement stands (VolumeOperations' record of it). */
export interface DataMovementFacts {
  readonly jobId: string;
  readonly mode: 'block' | 'file';
  /**
   * Waiting: its snapshot runs; Ready: the job can start (handed to the state machine until it
   * reports the job ran); Completed or Failed once the job's final document was read.
   */
  readonly state: 'Waiting' | 'Ready' | 'Completed' | 'Failed';
  readonly created: string;
  readonly started?: string;
  readonly updated?: string;
  readonly error?: string;
  readonly manifestId?: string;
  /** Bytes of the volume (block) or of its files (file). */
  readonly size?: number;
  readonly bytesDone?: number;
  readonly retainedSnapshot?: string;
}

/** What ties a worker's volume record to its data movement: its snapshot operation, or its PV. */
export function movementKeyOf(handled: {
  readonly pvName?: string;
  readonly pvcNamespace?: string;
  readonly pvcName?: string;
  readonly operation?: { readonly operationId: string };
}): string {
  return handled.operation
    ? `snapshot:${handled.operation.operationId}`
    : `files:${handled.pvName ?? ''}:${handled.pvcNamespace ?? ''}/${handled.pvcName ?? ''}`;
}

/** Whether Lifeboat's data mover moved a backed-up volume's data, so its repository can restore it. */
export function movedByLifeboat(info: BackupVolumeInfo): boolean {
  return info.snapshotDataMoved && info.snapshotDataMovementInfo?.dataMover === LIFEBOAT_DATA_MOVER;
}
