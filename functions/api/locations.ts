/**
 * Backups of a named location besides the deployment's own (`dr`: the DR source's bucket or its
 * replica), listed read-only as Velero's backup sync shows a backup storage location's: each
 * stored `velero-backup.json`, its `spec.storageLocation` and `velero.io/storage-location` label
 * naming the location. Never writes to the location.
 */
import { readBackupDocument } from '../../shared/adapters/stored-file-reader.js';
import type { ListQuery } from '../../shared/contracts/api.js';
import { type BackupDocument, CLUSTER_ANNOTATION } from '../../shared/domain/storage/backup-document.js';
import { storedBackupNames } from '../common/stored-records.js';
import type { ApiDeps } from './deps.js';
import { type ApiResult, invalid, json } from './http.js';
import { page } from './listing.js';

/** Velero's label on a synced backup naming its storage location. */
export const STORAGE_LOCATION_LABEL = 'velero.io/storage-location';

/** A backup as read from a location, marked with the location's name. */
function located(document: BackupDocument, location: string): BackupDocument {
  return {
    ...document,
    metadata: {
      ...document.metadata,
      labels: { ...document.metadata.labels, [STORAGE_LOCATION_LABEL]: location },
    },
    spec: { ...document.spec, storageLocation: location },
  };
}

export async function listLocationBackups(query: ListQuery, deps: ApiDeps): Promise<ApiResult> {
  const location = query.location ?? '';
  const store = deps.locations?.[location];
  if (!store) {
    const known = Object.keys(deps.locations ?? {});
    return invalid([
      {
        path: 'location',
        message: `"${location}" is not a backup location of this deployment (${known.length ? `one of: ${known.join(', ')}` : 'it has none besides its own'})`,
      },
    ]);
  }
  const signal = deps.signal ? { signal: deps.signal } : {};
  const list = await page<BackupDocument>({
    kind: 'BackupList',
    names: await storedBackupNames(store),
    query,
    objectOf: async (name) => {
      const document = await readBackupDocument(store, name, signal);
      return document ? located(document, location) : undefined;
    },
    clusterOf: (backup) => backup.metadata.annotations?.[CLUSTER_ANNOTATION],
  });
  return json(200, list);
}
