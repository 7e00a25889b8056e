/**
 * Wakes the backup state machine once every ItemBlock message has a result. Called by
 * CollectItems after it recorded the message count, and by each worker after its result:
 * whoever sees the last result completes the wait; completing twice is harmless.
 */
import { type BackupRun, collectedSummary } from '../shared/contracts/backup-run.js';
import { backupWorkKeys } from '../shared/domain/storage-keys.js';
import type { ObjectStore } from '../shared/ports/object-store.js';
import type { TaskCallbacks } from '../shared/ports/task-callbacks.js';

export async function completeIfDone(options: {
  run: Pick<BackupRun, 'name' | 'runId'>;
  store: ObjectStore;
  callbacks: TaskCallbacks;
  signal?: AbortSignal | undefined;
}): Promise<boolean> {
  const work = backupWorkKeys(options.run);
  const raw = await options.store.get(work.collected, { signal: options.signal });
  if (!raw) return false;
  const summary = collectedSummary.parse(JSON.parse(Buffer.from(raw).toString('utf8')));
  const done = (await options.store.list(`${work.resultsDir}${summary.attempt}-`, { signal: options.signal }))
    .length;
  if (done < summary.messages) return false;
  await options.callbacks.succeed(summary.taskToken, {
    messages: summary.messages,
    blocks: summary.blocks,
    items: summary.items,
    volumeOperations: [],
  });
  return true;
}
