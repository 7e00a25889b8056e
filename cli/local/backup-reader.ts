/** Reads what a backup location holds about backups: documents, resource lists, results, volumes-info and item operations. */
import { gunzipSync } from 'node:zlib';
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

/** A gzipped JSON object of the store, or undefined when there is none. */
export async function readGzipJson<T>(store: ObjectStore, key: string): Promise<T | undefined> {
  const body = await store.get(key);
  return body ? (JSON.parse(gunzipSync(body).toString('utf8')) as T) : undefined;
}

export async function readBackup(store: ObjectStore, name: string): Promise<StoredBackup | undefined> {
  const keys = backupKeys(name);
  const raw = await store.get(keys.metadata);
  if (!raw) return undefined;
  const document = JSON.parse(Buffer.from(raw).toString('utf8')) as BackupDocument;
  const resourceList = await readGzipJson<Record<string, string[]>>(store, keys.resourceList);
  const results = await readGzipJson<Results>(store, keys.results);
  const volumeInfos = await readGzipJson<BackupVolumeInfo[]>(store, keys.volumeInfo);
  const itemOperations = await readGzipJson<BackupOperation[]>(store, keys.itemOperations);
  return {
    document,
    ...(resourceList ? { resourceList } : {}),
    ...(results ? { results } : {}),
    ...(volumeInfos ? { volumeInfos } : {}),
    ...(itemOperations ? { itemOperations } : {}),
  };
}

export async function listBackups(store: ObjectStore): Promise<BackupDocument[]> {
  const keys = (await store.list('backups/')).filter((k) => k.endsWith('/velero-backup.json'));
  const documents: BackupDocument[] = [];
  for (const key of keys) {
    const raw = await store.get(key);
    if (raw) documents.push(JSON.parse(Buffer.from(raw).toString('utf8')) as BackupDocument);
  }
  return documents.sort((a, b) => b.metadata.creationTimestamp.localeCompare(a.metadata.creationTimestamp));
}
