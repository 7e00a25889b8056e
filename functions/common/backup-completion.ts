/**
 * Wakes the backup state machine once every ItemBlock message has a result. Called by
 * CollectItems after it recorded the message count, and by each worker after its result:
 * whoever sees the last result completes the wait; completing twice is harmless.
 */
import { type BackupRun, collectedSummary } from '../../shared/contracts/backup-run.js';
import { backupWorkKeys, DEFERRED_RESULT_INFIX } from '../../shared/domain/storage/keys.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { TaskCallbacks } from '../../shared/ports/task-callbacks.js';

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
  const prefix = summary.waitPrefix ?? `${summary.attempt}-`;
  const results = await options.store.list(`${work.resultsDir}${prefix}`, { signal: options.signal });
  // Results of deferred blocks sit beside the messages' results but are not messages.
  const done = results.filter((key) => !key.includes(DEFERRED_RESULT_INFIX)).length;
  if (done < summary.messages) return false;
  await options.callbacks.succeed(summary.taskToken, {
    messages: summary.messages,
    blocks: summary.blocks,
    items: summary.items,
    volumeOperations: [],
    longHookBlocks: await pendingDeferredBlocks({
      ...options,
      results,
      messagePrefix: prefix,
    }),
  });
  return true;
}

/**
 * The blocks workers deferred to a long hook run that have no result yet, as
 * `<messageId>/<blockId>` (a redelivered message defers its block again: listed once).
 */
async function pendingDeferredBlocks(options: {
  run: Pick<BackupRun, 'name' | 'runId'>;
  store: ObjectStore;
  results: readonly string[];
  /** Only blocks of these messages (the attempt whose wait completes). */
  messagePrefix: string;
  signal?: AbortSignal | undefined;
}): Promise<string[]> {
  const work = backupWorkKeys(options.run);
  const done = new Set(options.results);
  const pending: string[] = [];
  const prefix = `${work.deferredDir}${options.messagePrefix}`;
  for (const key of await options.store.list(prefix, { signal: options.signal })) {
    const id = key.slice(work.deferredDir.length).replace(/\.json$/, '');
    const [messageId, blockId, ...rest] = id.split('/');
    if (!messageId || !blockId || rest.length > 0) continue;
    if (!done.has(work.deferredResult(messageId, blockId))) pending.push(id);
  }
  return pending;
}
