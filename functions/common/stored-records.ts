/**
 * Reads what a backup location holds about backups and restores: each backup's document,
 * resource list, results, volumes-info and item operations; each restore's record, results and
 * resource list. Every file of a backup or restore goes through the bounded reader
 * (stored-file-reader.ts): one that is too large, a gzip bomb or not of its shape is refused,
 * naming it. Shared by the API and the `lifeboat --local` verbs, so both show the same. Reads
 * only (settling a dead run's record is the local verbs' business: cli/local/backup-reader.ts);
 * loads no SDK (`lifeboat backup get` imports it).
 */
import { readBackupDocument, readStoredJson } from '../../shared/adapters/stored-file-reader.js';
import {
  storedItemOperations,
  storedResourceList,
  storedResults,
} from '../../shared/contracts/backup-files.js';
import { storedRestoreRecord, storedRestoreResourceList } from '../../shared/contracts/restore-files.js';
import { backupVolumeInfos } from '../../shared/contracts/restore-volumes.js';
import { StoredFileUnreadable } from '../../shared/domain/errors.js';
import type { BackupDocument } from '../../shared/domain/storage/backup-document.js';
import { restoreKeys } from '../../shared/domain/storage/keys.js';
import type { Results } from '../../shared/domain/storage/results.js';
import { backupFile, restoreFile } from '../../shared/domain/storage/stored-files.js';
import type { BackupVolumeInfo } from '../../shared/domain/volumes/info.js';
import type { BackupOperation } from '../../shared/domain/volumes/operations.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';

export interface StoredBackup {
  readonly document: BackupDocument;
  readonly resourceList?: Record<string, string[]>;
  readonly results?: Results;
  readonly volumeInfos?: BackupVolumeInfo[];
  readonly itemOperations?: BackupOperation[];
}

/** Lifeboat's record of a restore (`plugins/lifeboat/restores/<name>.json`), a Velero Restore. */
export interface RestoreDocument {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly creationTimestamp?: string;
    readonly labels?: Readonly<Record<string, string>>;
  };
  readonly spec: { readonly backupName?: string };
  readonly status: {
    readonly phase?: string;
    readonly startTimestamp?: string;
    readonly completionTimestamp?: string;
    readonly progress?: { readonly totalItems: number; readonly itemsRestored: number };
    readonly warnings?: number;
    readonly errors?: number;
    readonly failureReason?: string;
    readonly validationErrors?: readonly string[];
    readonly hookStatus?: { readonly hooksAttempted?: number; readonly hooksFailed?: number };
  };
}

export interface StoredRestore {
  readonly document: RestoreDocument;
  readonly results?: Results;
  readonly resourceList?: Record<string, string[]>;
}

/**
 * One of Lifeboat's own small records under `plugins/lifeboat/` (a deletion request, a run's
 * request), or undefined when there is none. Not for a backup's files: readStoredJson bounds those.
 */
export async function readJson<T>(store: ObjectStore, key: string): Promise<T | undefined> {
  const body = await store.get(key);
  return body ? (JSON.parse(Buffer.from(body).toString('utf8')) as T) : undefined;
}

/** A backup's document and side files, each read within its limits; undefined without `velero-backup.json`. */
export async function readBackup(store: ObjectStore, name: string): Promise<StoredBackup | undefined> {
  const document = await readBackupDocument(store, name);
  if (!document) return undefined;
  const resourceList = await readStoredJson(store, backupFile(name, 'resourceList'), {
    schema: storedResourceList,
    shape: 'a resource list',
  });
  const results = await readStoredJson(store, backupFile(name, 'results'), {
    schema: storedResults,
    shape: 'a results file',
  });
  const volumeInfos = await readStoredJson(store, backupFile(name, 'volumeInfo'), {
    schema: backupVolumeInfos,
    shape: 'a list of volumes',
  });
  const itemOperations = await readStoredJson(store, backupFile(name, 'itemOperations'), {
    schema: storedItemOperations,
    shape: 'a list of item operations',
  });
  return {
    document,
    ...(resourceList ? { resourceList } : {}),
    ...(results ? { results } : {}),
    ...(volumeInfos ? { volumeInfos: volumeInfos as BackupVolumeInfo[] } : {}),
    ...(itemOperations ? { itemOperations } : {}),
  };
}

/** The names of the backups stored (those with a `velero-backup.json`), in name order. */
export async function storedBackupNames(store: ObjectStore): Promise<string[]> {
  return (await store.list('backups/'))
    .filter((k) => k.endsWith('/velero-backup.json'))
    .map((k) => k.split('/')[1] ?? '')
    .filter(Boolean)
    .sort();
}

/**
 * Every stored backup's document, newest first, and why each one that cannot be read is left out
 * (a `velero-backup.json` another writer broke must not hide the others).
 */
export async function listBackups(
  store: ObjectStore,
): Promise<{ documents: BackupDocument[]; unreadable: string[] }> {
  const documents: BackupDocument[] = [];
  const unreadable: string[] = [];
  for (const name of await storedBackupNames(store)) {
    try {
      const document = await readBackupDocument(store, name);
      if (document) documents.push(document);
    } catch (error) {
      if (!(error instanceof StoredFileUnreadable)) throw error;
      unreadable.push(error.message);
    }
  }
  documents.sort((a, b) => b.metadata.creationTimestamp.localeCompare(a.metadata.creationTimestamp));
  return { documents, unreadable };
}

/** A restore's record, checked; undefined when there is none. */
export async function readRestoreRecord(
  store: ObjectStore,
  name: string,
): Promise<RestoreDocument | undefined> {
  return readStoredJson(store, restoreFile(name, 'status'), {
    schema: storedRestoreRecord,
    shape: 'a velero.io/v1 Restore',
  });
}

export async function readRestore(store: ObjectStore, name: string): Promise<StoredRestore | undefined> {
  const document = await readRestoreRecord(store, name);
  if (!document) return undefined;
  const results = await readStoredJson(store, restoreFile(name, 'results'), {
    schema: storedResults,
    shape: 'a results file',
  });
  const resourceList = await readStoredJson(store, restoreFile(name, 'resourceList'), {
    schema: storedRestoreResourceList,
    shape: 'a resource list',
  });
  return { document, ...(results ? { results } : {}), ...(resourceList ? { resourceList } : {}) };
}

/** The names of the restores recorded, in name order. */
export async function storedRestoreNames(store: ObjectStore): Promise<string[]> {
  const dir = restoreKeys('x').status.replace(/x\.json$/, '');
  return (await store.list(dir))
    .filter((k) => k.endsWith('.json') && !k.slice(dir.length).includes('/'))
    .map((k) => k.slice(dir.length, -'.json'.length))
    .sort();
}

/** Every readable restore record, newest first (one that cannot be read is left out). */
export async function listRestores(store: ObjectStore): Promise<RestoreDocument[]> {
  const documents: RestoreDocument[] = [];
  for (const name of await storedRestoreNames(store)) {
    try {
      const document = await readRestoreRecord(store, name);
      if (document) documents.push(document);
    } catch (error) {
      if (!(error instanceof StoredFileUnreadable)) throw error;
    }
  }
  return documents.sort((a, b) =>
    (b.metadata?.creationTimestamp ?? '').localeCompare(a.metadata?.creationTimestamp ?? ''),
  );
}
