/**
 * S3 Object Lock for what a step writes of a backup: a store that gives every object written
 * under `backups/` the retention its backup is kept for (until its expiration), in the mode the
 * stack chose. Reads, lists and deletes pass through unchanged; so do writes elsewhere (working
 * data, which must stay deletable).
 */
import { STORAGE_PREFIXES } from '../../shared/domain/storage/keys.js';
import type { ObjectStore, PutOptions, Retention } from '../../shared/ports/object-store.js';

export function retainingBackups(store: ObjectStore, retention: Retention | undefined): ObjectStore {
  if (!retention) return store;
  const withRetention = (key: string, options: PutOptions | undefined): PutOptions =>
    key.startsWith(STORAGE_PREFIXES.backups) ? { ...options, retention } : (options ?? {});
  return {
    location: store.location,
    put: (key, body, options) => store.put(key, body, withRetention(key, options)),
    putStream: (key, body, options) => store.putStream(key, body, withRetention(key, options)),
    get: (key, options) => store.get(key, options),
    getStream: (key, options) => store.getStream(key, options),
    ...(store.getRange ? { getRange: store.getRange.bind(store) } : {}),
    exists: (key, options) => store.exists(key, options),
    list: (prefix, options) => store.list(prefix, options),
    delete: (key, options) => store.delete(key, options),
    ...(store.retentionOf ? { retentionOf: store.retentionOf.bind(store) } : {}),
  };
}
