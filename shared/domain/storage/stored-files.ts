/**
 * The files of a backup or restore that Lifeboat reads back, each with what errors call it and
 * the most it may hold: Velero's `velero-backup.json` and gzip'd side files may come from another
 * Velero, a replicated bucket or anyone with write access, so every read of one is bounded (bytes
 * once decompressed, decompression ratio) and a refusal names the file. Pure: keys and limits.
 */
import { backupKeys, restoreKeys } from './keys.js';

export interface StoredFileLimits {
  /** The most bytes the file may hold, decompressed. */
  readonly maxBytes: number;
  /** The highest decompressed:compressed ratio, once past `ratioCheckAfterBytes`. */
  readonly maxRatio: number;
  readonly ratioCheckAfterBytes: number;
}

export interface StoredFile {
  readonly key: string;
  /** What errors call it: `the volume info of backup "nightly"`. */
  readonly what: string;
  readonly gzipped: boolean;
  readonly limits: StoredFileLimits;
}

const MiB = 1024 * 1024;

/**
 * JSON compresses some 10-50 times (Lifeboat's level-1 gzip: 26 on the benchmark's objects);
 * a thousand times is a bomb (a run of one byte), found within the first MiB.
 */
const RATIO = { maxRatio: 1000, ratioCheckAfterBytes: MiB } as const;

/**
 * A Backup or Restore document is a Kubernetes object, which etcd holds to 1.5 MiB; a list of
 * a million items' names is some 40 MiB; a backup's results, volume info or operations list
 * thousands of entries of a few hundred bytes. Logs are read line by line (never whole), each
 * line at most LOG_LINE_MAX_BYTES.
 */
const LIMITS = {
  document: { maxBytes: 2 * MiB, ...RATIO },
  list: { maxBytes: 64 * MiB, ...RATIO },
  report: { maxBytes: 32 * MiB, ...RATIO },
  logs: { maxBytes: 1024 * MiB, ...RATIO },
} as const satisfies Record<string, StoredFileLimits>;

export const LOG_LINE_MAX_BYTES = MiB;

export type BackupFileKind =
  | 'metadata'
  | 'resourceList'
  | 'results'
  | 'volumeInfo'
  | 'itemOperations'
  | 'volumeSnapshots'
  | 'podVolumeBackups'
  | 'logs';

const BACKUP_FILES: Record<BackupFileKind, { label: string; limits: StoredFileLimits }> = {
  metadata: { label: 'velero-backup.json', limits: LIMITS.document },
  resourceList: { label: 'resource list', limits: LIMITS.list },
  results: { label: 'results', limits: LIMITS.report },
  volumeInfo: { label: 'volume info', limits: LIMITS.report },
  itemOperations: { label: 'item operations', limits: LIMITS.report },
  volumeSnapshots: { label: 'volume snapshots', limits: LIMITS.report },
  podVolumeBackups: { label: 'pod volume backups', limits: LIMITS.report },
  logs: { label: 'logs', limits: LIMITS.logs },
};

/** One of a backup's files: `backups/<name>/…`. */
export function backupFile(name: string, kind: BackupFileKind): StoredFile {
  const { label, limits } = BACKUP_FILES[kind];
  return {
    key: backupKeys(name)[kind],
    what: `the ${label} of backup "${name}"`,
    gzipped: kind !== 'metadata',
    limits,
  };
}

export type RestoreFileKind = 'status' | 'resourceList' | 'results' | 'logs' | 'volumeInfo';

const RESTORE_FILES: Record<RestoreFileKind, { label: string; limits: StoredFileLimits }> = {
  status: { label: 'record', limits: LIMITS.document },
  resourceList: { label: 'resource list', limits: LIMITS.list },
  results: { label: 'results', limits: LIMITS.report },
  logs: { label: 'logs', limits: LIMITS.logs },
  volumeInfo: { label: 'volume info', limits: LIMITS.report },
};

/** One of a restore's files: `restores/<name>/…`, and Lifeboat's record of the restore. */
export function restoreFile(name: string, kind: RestoreFileKind): StoredFile {
  const { label, limits } = RESTORE_FILES[kind];
  return {
    key: restoreKeys(name)[kind],
    what: `the ${label} of restore "${name}"`,
    gzipped: kind !== 'status',
    limits,
  };
}
