/**
 * What the `--local` verbs read about backups: what functions/common/stored-records.ts reads
 * (each file through the bounded reader, refused naming it), after settling the name first: a
 * backup whose run died is recorded Failed (abandoned-backup.ts); one still running is shown
 * InProgress. Writes only that record of a dead run.
 */

import {
  listBackups as listStoredBackups,
  readBackup as readStoredBackup,
  type StoredBackup,
} from '../../functions/common/stored-records.js';
import {
  inProgressDocument,
  settleAbandonedBackup,
  settleClaimedBackups,
} from '../../functions/record-backup-failure/abandoned-backup.js';
import { readBackupDocument } from '../../shared/adapters/stored-file-reader.js';
import { systemClock } from '../../shared/adapters/system-clock.js';
import type { BackupDocument } from '../../shared/domain/storage/backup-document.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';

export type { StoredBackup };

/** A backup's document and side files; undefined when it has no `velero-backup.json`. */
export async function readBackup(store: ObjectStore, name: string): Promise<StoredBackup | undefined> {
  const found = await settleAbandonedBackup({ name }, { store, clock: systemClock });
  if (found.state === 'running') return { document: inProgressDocument(name, found.claim) };
  return readStoredBackup(store, name);
}

/** Every backup's document, newest first, and why each one that cannot be read is left out. */
export async function listBackups(
  store: ObjectStore,
): Promise<{ documents: BackupDocument[]; unreadable: string[] }> {
  const running = await settleClaimedBackups({ store, clock: systemClock });
  const { documents, unreadable } = await listStoredBackups(store);
  // A run that finished since it was looked at is listed once, as stored.
  const stored = new Set(documents.map((d) => d.metadata.name));
  const all = [...documents, ...running.filter((d) => !stored.has(d.metadata.name))];
  all.sort((a, b) => b.metadata.creationTimestamp.localeCompare(a.metadata.creationTimestamp));
  return { documents: all, unreadable };
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
