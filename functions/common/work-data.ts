/**
 * A run's working data goes when the run ends, whatever its outcome: it holds copies of what was
 * backed up or restored (Secrets among them), and nothing reads it afterwards. The bucket's
 * lifecycle rule on the working prefix stays as the backstop for a run that never ends. Never
 * deletes anything outside the one run's prefix it is given.
 */
import pLimit from 'p-limit';
import { WORK_PREFIX } from '../../shared/domain/storage/keys.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';

/** Deletes every object under a run's working prefix, a few at a time; how many there were. */
export async function removeWorkData(options: {
  store: ObjectStore;
  /** The run's working prefix (backupWorkKeys(run).dir, restoreWorkKeys(run).dir). */
  dir: string;
  signal?: AbortSignal;
}): Promise<number> {
  const { store, dir, signal } = options;
  if (!dir.startsWith(WORK_PREFIX) || !dir.endsWith('/') || dir.split('/').length < 7)
    throw new Error(`refusing to remove ${dir}: not one run's working prefix`);
  const withSignal = signal ? { signal } : {};
  const keys = await store.list(dir, withSignal);
  const limit = pLimit(8);
  await Promise.all(keys.map((key) => limit(() => store.delete(key, withSignal))));
  return keys.length;
}
