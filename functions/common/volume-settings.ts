/**
 * The volume settings ValidateBackup stored for a run (resource policy, legacy volume fields,
 * timeouts), read by the workers, VolumeOperations and FinalizeBackup; cached per run, since
 * one Lambda container serves many messages of a few runs. A run without them (started before
 * volumes existed) gets Velero's defaults.
 */
import { type VolumeSettings, volumeSettings } from '../../shared/contracts/backup-volumes.js';
import { backupWorkKeys } from '../../shared/domain/storage/keys.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';

/** Velero's defaults when ValidateBackup recorded nothing (csiSnapshotTimeout 10m, itemOperationTimeout 4h). */
const DEFAULT_SETTINGS: Omit<VolumeSettings, 'cluster'> = {
  policy: null,
  snapshotVolumes: null,
  defaultVolumesToFsBackup: null,
  snapshotMoveData: null,
  backupLabels: {},
  backupAnnotations: {},
  csiSnapshotTimeoutSeconds: 600,
  itemOperationTimeoutSeconds: 14_400,
};

const settingsCache = new Map<string, Promise<VolumeSettings>>();

export function readVolumeSettings(options: {
  run: { name: string; runId: string };
  store: ObjectStore;
  signal?: AbortSignal;
}): Promise<VolumeSettings> {
  const key = backupWorkKeys(options.run).volumeSettings;
  let cached = settingsCache.get(key);
  if (!cached) {
    cached = options.store
      .get(key, options.signal ? { signal: options.signal } : {})
      .then((raw) =>
        raw
          ? volumeSettings.parse(JSON.parse(Buffer.from(raw).toString('utf8')))
          : { cluster: '', ...DEFAULT_SETTINGS },
      );
    // A failed read is not remembered: the next message tries again.
    cached.catch(() => settingsCache.delete(key));
    if (settingsCache.size > 16) settingsCache.delete(settingsCache.keys().next().value ?? '');
    settingsCache.set(key, cached);
  }
  return cached;
}
