/**
 * A data-mover job's working data in the store (storage/keys.ts: dataMoverWorkKeys): the progress
 * document the state machine reads, block backup's checkpoint, and the cancel marker. Everything
 * read back is parsed (a corrupt object is reported by its key, never trusted). The commands a
 * person runs (`verify`, `gc`) have no job in the store: `detachedJobWork` keeps nothing.
 */
import {
  blockBackupCheckpoint,
  type DataMoverCancel,
  type DataMoverProgress,
  dataMoverCancel,
  dataMoverProgress,
} from '../../shared/contracts/data-mover-job.js';
import { RepositoryObjectCorrupt } from '../../shared/domain/errors.js';
import { dataMoverWorkKeys } from '../../shared/domain/storage/keys.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { BlockBackupCheckpoints } from './block-backup.js';

export interface JobWork {
  readProgress(signal?: AbortSignal): Promise<DataMoverProgress | undefined>;
  writeProgress(progress: DataMoverProgress): Promise<void>;
  /** The cancel marker, when one was written for the job. */
  cancelRequested(signal?: AbortSignal): Promise<DataMoverCancel | undefined>;
  readonly checkpoints: BlockBackupCheckpoints;
}

async function readParsed<T>(options: {
  store: ObjectStore;
  key: string;
  parse: (value: unknown) => T;
  signal?: AbortSignal;
}): Promise<T | undefined> {
  const { store, key, signal } = options;
  const body = await store.get(key, signal ? { signal } : {});
  if (!body) return undefined;
  try {
    return options.parse(JSON.parse(Buffer.from(body).toString('utf8')));
  } catch (error) {
    throw new RepositoryObjectCorrupt(key, 'not the data mover object expected there', { cause: error });
  }
}

/** The job's working data in `store`, under its id. */
export function storedJobWork(options: { store: ObjectStore; jobId: string }): JobWork {
  const { store } = options;
  const keys = dataMoverWorkKeys(options.jobId);
  const json = (value: unknown): string => `${JSON.stringify(value)}\n`;
  return {
    readProgress: (signal) =>
      readParsed({ store, key: keys.progress, parse: (v) => dataMoverProgress.parse(v), signal }),
    writeProgress: (progress) =>
      store.put(keys.progress, json(progress), { contentType: 'application/json' }),
    cancelRequested: (signal) =>
      readParsed({ store, key: keys.cancel, parse: (v) => dataMoverCancel.parse(v), signal }),
    checkpoints: {
      load: () => readParsed({ store, key: keys.checkpoint, parse: (v) => blockBackupCheckpoint.parse(v) }),
      save: (checkpoint) => store.put(keys.checkpoint, json(checkpoint), { contentType: 'application/json' }),
    },
  };
}

/** No working data: a run by hand of `verify` or `gc` reports on stdout only. */
export const detachedJobWork: JobWork = {
  readProgress: async () => undefined,
  writeProgress: async () => undefined,
  cancelRequested: async () => undefined,
  checkpoints: { load: async () => undefined, save: async () => undefined },
};
