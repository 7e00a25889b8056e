/**
 * Reads what a backup location holds about backups: documents, resource lists, results,
 * volumes-info and item operations, each through the bounded reader of a backup's files (a file
 * that is too large, a gzip bomb or not what it should be is refused, naming it). A backup whose
 * run died is recorded Failed first (abandoned-backup.ts); one still running is shown InProgress.
 */
import {
  inProgressDocument,
  settleAbandonedBackup,
  settleClaimedBackups,
} from '../../functions/record-backup-failure/abandoned-backup.js';
import { readBackupDocument, readStoredJson } from '../../shared/adapters/stored-file-reader.js';
import { systemClock } from '../../shared/adapters/system-clock.js';
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
  const found = await settleAbandonedBackup({ name }, { store, clock: systemClock });
  if (found.state === 'running') return { document: inProgressDocument(name, found.claim) };
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
  const running = await settleClaimedBackups({ store, clock: systemClock });
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
  // A run that finished since it was looked at is listed once, as stored.
  const stored = new Set(documents.map((d) => d.metadata.name));
  documents.push(...running.filter((d) => !stored.has(d.metadata.name)));
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
  const found = await settleAbandonedBackup({ name }, { store, clock: systemClock });
  if (found.state === 'running')
    return { documents: [inProgressDocument(name, found.claim)], unreadable: [] };
  const document = await readBackupDocument(store, name);
  return { documents: document ? [document] : [], unreadable: [] };
}
