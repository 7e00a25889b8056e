/**
 * Reads what a backup location holds about backups: documents, resource lists, results,
 * volumes-info and item operations. A backup whose run died is recorded Failed first
 * (abandoned-backup.ts); one still running is shown InProgress.
 */
import { gunzipSync } from 'node:zlib';
import {
  inProgressDocument,
  settleAbandonedBackup,
  settleClaimedBackups,
} from '../../functions/record-backup-failure/abandoned-backup.js';
import { systemClock } from '../../shared/adapters/system-clock.js';
import type { BackupDocument } from '../../shared/domain/storage/backup-document.js';
import { backupKeys } from '../../shared/domain/storage/keys.js';
import type { Results } from '../../shared/domain/storage/results.js';
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

async function gzJson<T>(store: ObjectStore, key: string): Promise<T | undefined> {
  const body = await store.get(key);
  return body ? (JSON.parse(gunzipSync(body).toString('utf8')) as T) : undefined;
}

export async function readBackup(store: ObjectStore, name: string): Promise<StoredBackup | undefined> {
  const keys = backupKeys(name);
  const found = await settleAbandonedBackup({ name }, { store, clock: systemClock });
  if (found.state === 'running') return { document: inProgressDocument(name, found.claim) };
  const raw = await store.get(keys.metadata);
  if (!raw) return undefined;
  const document = JSON.parse(Buffer.from(raw).toString('utf8')) as BackupDocument;
  const resourceList = await gzJson<Record<string, string[]>>(store, keys.resourceList);
  const results = await gzJson<Results>(store, keys.results);
  const volumeInfos = await gzJson<BackupVolumeInfo[]>(store, keys.volumeInfo);
  const itemOperations = await gzJson<BackupOperation[]>(store, keys.itemOperations);
  return {
    document,
    ...(resourceList ? { resourceList } : {}),
    ...(results ? { results } : {}),
    ...(volumeInfos ? { volumeInfos } : {}),
    ...(itemOperations ? { itemOperations } : {}),
  };
}

export async function listBackups(store: ObjectStore): Promise<BackupDocument[]> {
  const running = await settleClaimedBackups({ store, clock: systemClock });
  const keys = (await store.list('backups/')).filter((k) => k.endsWith('/velero-backup.json'));
  const documents: BackupDocument[] = [];
  for (const key of keys) {
    const raw = await store.get(key);
    if (raw) documents.push(JSON.parse(Buffer.from(raw).toString('utf8')) as BackupDocument);
  }
  // A run that finished since it was looked at is listed once, as stored.
  const stored = new Set(documents.map((d) => d.metadata.name));
  documents.push(...running.filter((d) => !stored.has(d.metadata.name)));
  return documents.sort((a, b) => b.metadata.creationTimestamp.localeCompare(a.metadata.creationTimestamp));
}
