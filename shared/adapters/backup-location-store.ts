/**
 * A deployment's store with a second, read-only backup location behind it: the DR source (the
 * production deployment's bucket, or its replica), listed as Velero's backup sync lists a backup
 * storage location. A backup's files are read from the location that holds it: the deployment's
 * own when it has that backup, else the source location (Velero: a synced backup never replaces
 * one of the same name). Everything else — restores, claims, working data, listings — is the
 * deployment's own.
 * Never writes, deletes or sets a retention in the source location: every write goes to the
 * deployment's own store.
 */
import { backupKeys, STORAGE_PREFIXES } from '../domain/storage/keys.js';
import type { ObjectStore, PutOptions, Retention } from '../ports/object-store.js';

type Signal = { signal?: AbortSignal };

/** The backup whose files a key names (`backups/<name>/…`), if any. */
function backupOf(key: string): string | undefined {
  if (!key.startsWith(STORAGE_PREFIXES.backups)) return undefined;
  const name = key.slice(STORAGE_PREFIXES.backups.length).split('/')[0];
  return name || undefined;
}

export class BackupLocationStore implements ObjectStore {
  readonly location: string;
  /** Backups found only in the source location, by name (a backup never moves once complete). */
  private readonly fromSource = new Set<string>();

  constructor(
    private readonly own: ObjectStore,
    /** The read-only location: the DR source. */
    readonly source: ObjectStore,
  ) {
    this.location = own.location;
  }

  /** The store that holds a key: the source only for the files of a backup that only it has. */
  private async holderOf(key: string, options?: Signal): Promise<ObjectStore> {
    const name = backupOf(key);
    if (name === undefined) return this.own;
    if (this.fromSource.has(name)) return this.source;
    const marker = backupKeys(name).metadata;
    if (await this.own.exists(marker, options)) return this.own;
    if (!(await this.source.exists(marker, options))) return this.own;
    this.fromSource.add(name);
    return this.source;
  }

  put(key: string, body: Uint8Array | string, options?: PutOptions): Promise<void> {
    return this.own.put(key, body, options);
  }

  putStream(key: string, body: AsyncIterable<Uint8Array>, options?: PutOptions): Promise<void> {
    return this.own.putStream(key, body, options);
  }

  delete(key: string, options?: Signal): Promise<void> {
    return this.own.delete(key, options);
  }

  list(prefix: string, options?: Signal): Promise<string[]> {
    return this.own.list(prefix, options);
  }

  async get(key: string, options?: Signal): Promise<Uint8Array | undefined> {
    return (await this.holderOf(key, options)).get(key, options);
  }

  async getStream(key: string, options?: Signal): Promise<AsyncIterable<Uint8Array> | undefined> {
    return (await this.holderOf(key, options)).getStream(key, options);
  }

  async getRange(
    key: string,
    range: { readonly offset: number; readonly length: number },
    options?: Signal,
  ): Promise<Uint8Array | undefined> {
    const holder = await this.holderOf(key, options);
    if (holder.getRange) return holder.getRange(key, range, options);
    return (await holder.get(key, options))?.slice(range.offset, range.offset + range.length);
  }

  async exists(key: string, options?: Signal): Promise<boolean> {
    return (await this.holderOf(key, options)).exists(key, options);
  }

  async size(key: string, options?: Signal): Promise<number | undefined> {
    const holder = await this.holderOf(key, options);
    if (holder.size) return holder.size(key, options);
    return (await holder.get(key, options))?.byteLength;
  }

  async retentionOf(key: string, options?: Signal): Promise<Retention | undefined> {
    return (await this.holderOf(key, options)).retentionOf?.(key, options);
  }
}

/** A location seen read-only: listed and read, every write refused naming the location. */
export function readOnlyLocation(options: { store: ObjectStore; name: string }): ObjectStore {
  const { store, name } = options;
  const refuse = (key: string) =>
    Promise.reject(new Error(`backup location "${name}" is read-only: not writing ${key}`));
  return {
    location: store.location,
    get: (key, o) => store.get(key, o),
    getStream: (key, o) => store.getStream(key, o),
    exists: (key, o) => store.exists(key, o),
    list: (prefix, o) => store.list(prefix, o),
    ...(store.getRange ? { getRange: store.getRange.bind(store) } : {}),
    ...(store.size ? { size: store.size.bind(store) } : {}),
    ...(store.retentionOf ? { retentionOf: store.retentionOf.bind(store) } : {}),
    put: (key) => refuse(key),
    putStream: (key) => refuse(key),
    delete: (key) => refuse(key),
  };
}
