/**
 * Reads what a backup location holds about backups and restores: each backup's document,
 * resource list, results, volumes-info and item operations; each restore's record, results and
 * resource list. Shared by the API and the `lifeboat --local` verbs, so both show the same. Reads
 * only; loads no SDK (`lifeboat backup get` imports it).
 */
import { gunzipSync } from 'node:zlib';
import type { BackupDocument } from '../../shared/domain/storage/backup-document.js';
import { backupKeys, restoreKeys } from '../../shared/domain/storage/keys.js';
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

/** A gzipped JSON object of the store, or undefined when there is none. */
export async function readGzipJson<T>(store: ObjectStore, key: string): Promise<T | undefined> {
  const body = await store.get(key);
  return body ? (JSON.parse(gunzipSync(body).toString('utf8')) as T) : undefined;
}

/** A plain JSON object of the store, or undefined when there is none. */
export async function readJson<T>(store: ObjectStore, key: string): Promise<T | undefined> {
  const body = await store.get(key);
  return body ? (JSON.parse(Buffer.from(body).toString('utf8')) as T) : undefined;
}

export async function readBackup(store: ObjectStore, name: string): Promise<StoredBackup | undefined> {
  const keys = backupKeys(name);
  const document = await readJson<BackupDocument>(store, keys.metadata);
  if (!document) return undefined;
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

/** The names of the backups stored (those with a `velero-backup.json`), in name order. */
export async function storedBackupNames(store: ObjectStore): Promise<string[]> {
  return (await store.list('backups/'))
    .filter((k) => k.endsWith('/velero-backup.json'))
    .map((k) => k.split('/')[1] ?? '')
    .filter(Boolean)
    .sort();
}

export async function listBackups(store: ObjectStore): Promise<BackupDocument[]> {
  const documents: BackupDocument[] = [];
  for (const name of await storedBackupNames(store)) {
    const document = await readJson<BackupDocument>(store, backupKeys(name).metadata);
    if (document) documents.push(document);
  }
  return documents.sort((a, b) => b.metadata.creationTimestamp.localeCompare(a.metadata.creationTimestamp));
}

export async function readRestore(store: ObjectStore, name: string): Promise<StoredRestore | undefined> {
  const keys = restoreKeys(name);
  const document = await readJson<RestoreDocument>(store, keys.status);
  if (!document) return undefined;
  const results = await readGzipJson<Results>(store, keys.results);
  const resourceList = await readGzipJson<Record<string, string[]>>(store, keys.resourceList);
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

export async function listRestores(store: ObjectStore): Promise<RestoreDocument[]> {
  const documents: RestoreDocument[] = [];
  for (const name of await storedRestoreNames(store)) {
    const document = await readJson<RestoreDocument>(store, restoreKeys(name).status);
    if (document) documents.push(document);
  }
  return documents.sort((a, b) =>
    (b.metadata?.creationTimestamp ?? '').localeCompare(a.metadata?.creationTimestamp ?? ''),
  );
}
