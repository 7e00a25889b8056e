/**
 * Velero: a schedule's backups carry the `velero.io/schedule-name` label; "the schedule's backup"
 * is its latest Completed one. Reads `velero-backup.json` files only; a backup whose document
 * cannot be read is not one of them (asked for by name, it is refused with the reason).
 */
import { readBackupDocument } from '../../shared/adapters/stored-file-reader.js';
import { StoredFileUnreadable } from '../../shared/domain/errors.js';
import { SCHEDULE_NAME_LABEL } from '../../shared/domain/schedules/naming.js';
import type { BackupDocument } from '../../shared/domain/storage/backup-document.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';

/** The latest Completed backup of the schedule, by start time; undefined when it has none. */
export async function latestBackupOfSchedule(
  store: ObjectStore,
  schedule: string,
  options: { signal?: AbortSignal } = {},
): Promise<BackupDocument | undefined> {
  const names = (await store.list('backups/', options))
    .filter((k) => k.endsWith('/velero-backup.json'))
    .map((k) => k.slice('backups/'.length, -'/velero-backup.json'.length));
  let latest: BackupDocument | undefined;
  for (const name of names) {
    const doc = await readBackupDocument(store, name, options).catch((error: unknown) => {
      if (error instanceof StoredFileUnreadable) return undefined;
      throw error;
    });
    if (doc?.metadata.labels?.[SCHEDULE_NAME_LABEL] !== schedule || doc.status.phase !== 'Completed')
      continue;
    if (!latest || doc.status.startTimestamp > latest.status.startTimestamp) latest = doc;
  }
  return latest;
}
