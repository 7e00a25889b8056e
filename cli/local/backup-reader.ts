/**
 * Reads what a backup location holds about backups: documents, resource lists, results,
 * volumes-info and item operations, each through the bounded reader of a backup's files (a file
 * that is too large, a gzip bomb or not what it should be is refused, naming it).
 */
import { readBackupDocument, readStoredJson } from '../../shared/adapters/stored-file-reader.js';
import {
  storedItemOperations,
  storedResourceList,
  storedResults,
} from '../../shared/contracts/backup-files.js';
import { backupVolumeInfos } from '../../shared/contracts/restore-volumes.js';
import { StoredFileUnreadable } from '../../shared/domain/errors.js';
import type { BackupDocument } from '../../shared/domain/storage/backup-document.js';
import type { Results } from '../../shared/domain/storage/results.js';
import { backupFile } from '../../shared/domain/storage/stored-files.js';
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

/** A backup's document and side files; undefined when it has no `velero-backup.json`. */
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

/** Every backup's document, newest first, and why each one that cannot be read is left out. */
export async function listBackups(
  store: ObjectStore,
): Promise<{ documents: BackupDocument[]; unreadable: string[] }> {
  const names = (await store.list('backups/'))
    .filter((k) => k.endsWith('/velero-backup.json'))
    .map((k) => k.slice('backups/'.length, -'/velero-backup.json'.length));
  const documents: BackupDocument[] = [];
  const unreadable: string[] = [];
  for (const name of names) {
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

/**
 * What `backup get` shows: the backup named (one whose `velero-backup.json` cannot be read fails,
 * saying why), or every backup, each one that cannot be read left out and named.
 */
export async function backupsToGet(
  store: ObjectStore,
  name?: string,
): Promise<{ documents: BackupDocument[]; unreadable: string[] }> {
  if (!name) return listBackups(store);
  const document = await readBackupDocument(store, name);
  return { documents: document ? [document] : [], unreadable: [] };
}
