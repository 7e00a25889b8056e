/**
 * BackupItemBlock: the worker. For each ItemBlock of a message: pre hooks on the block's pods →
 * every item → post hooks (hooks arrive with their own feature). The message's tar entries go
 * to the working data as one gzip member (a fragment of the final tarball), with a result listing
 * the items, errors and log. Idempotent: a redelivered message rewrites the same fragment and
 * result. A problem with one item becomes an error in the result, never a failed block.
 */
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import { type TarEntry, tarOf } from '../../shared/adapters/tar-archive.js';
import {
  type BlockItem,
  blockItem,
  type ItemBlockMessage,
  type MessageResult,
} from '../../shared/contracts/backup-run.js';
import { apiVersionOf } from '../../shared/domain/api-resources.js';
import { type LogEvent, logTextOf } from '../../shared/domain/backup-log.js';
import { AlreadyExists, LifeboatError } from '../../shared/domain/errors.js';
import { emptyResults, mergeResults, type Results, resultOf } from '../../shared/domain/results.js';
import { backupWorkKeys } from '../../shared/domain/storage-keys.js';
import { withoutEndOfArchive } from '../../shared/domain/tar-fragments.js';
import { entryNames } from '../../shared/domain/tarball-layout.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { TaskCallbacks } from '../../shared/ports/task-callbacks.js';
import { completeIfDone } from '../backup-completion.js';

// Compression runs on libuv's thread pool, beside the event loop, not on it.
const gzip = promisify(gzipCallback);

export interface BackupItemBlockDeps {
  readonly store: ObjectStore;
  readonly callbacks: TaskCallbacks;
  readonly clock: Clock;
  readonly signal?: AbortSignal;
}

async function itemsOf(
  block: ItemBlockMessage['blocks'][number],
  store: ObjectStore,
  signal?: AbortSignal,
): Promise<BlockItem[]> {
  if ('items' in block) return block.items;
  const raw = await store.get(block.itemsKey, { signal });
  if (!raw) throw new LifeboatError(`the items of ItemBlock ${block.id} are missing from the working data`);
  return blockItem.array().parse(JSON.parse(Buffer.from(raw).toString('utf8')));
}

export async function backupItemBlocks(
  message: ItemBlockMessage,
  deps: BackupItemBlockDeps,
): Promise<MessageResult> {
  const log: LogEvent[] = [];
  const results: Results = emptyResults;
  const items: MessageResult['items'] = [];
  const entries: TarEntry[] = [];
  const time = deps.clock.now().toISOString();
  for (const block of message.blocks) {
    for (const item of await itemsOf(block, deps.store, deps.signal)) {
      const { ref } = item;
      const body = item.json;
      for (const name of entryNames(ref, { preferred: item.preferred })) entries.push({ name, body });
      items.push({
        apiVersion: apiVersionOf(ref),
        kind: item.kind,
        namespace: ref.namespace,
        name: ref.name,
      });
      log.push({
        time,
        level: 'info',
        msg: 'Backed up item',
        fields: {
          backup: message.backup.name,
          resource: ref.group ? `${ref.resource}.${ref.group}` : ref.resource,
          namespace: ref.namespace,
          name: ref.name,
        },
      });
    }
  }
  const work = backupWorkKeys(message.backup);
  let fragmentKey: string | null = null;
  if (entries.length > 0) {
    // The tar mtime is the backup's start, so a redelivery writes identical bytes.
    const tar = await tarOf(entries, { mtime: new Date(message.backup.startedAt) });
    fragmentKey = work.fragment(message.messageId);
    await deps.store.put(fragmentKey, await gzip(withoutEndOfArchive(tar)), {
      contentType: 'application/gzip',
    });
  }
  const { text: logText, levels: logLevels } = logTextOf(log);
  const result: MessageResult = {
    messageId: message.messageId,
    items,
    fragmentKey,
    ...results,
    logText,
    logLevels,
  };
  await writeResult({ message, result, deps });
  return result;
}

async function writeResult(options: {
  message: ItemBlockMessage;
  result: MessageResult;
  deps: BackupItemBlockDeps;
  /** A dead letter never replaces the result of a delivery that did succeed. */
  onlyIfAbsent?: boolean;
}): Promise<void> {
  const { message, result, deps } = options;
  const work = backupWorkKeys(message.backup);
  try {
    await deps.store.put(work.messageResult(message.messageId), await gzip(JSON.stringify(result)), {
      contentType: 'application/gzip',
      ...(options.onlyIfAbsent ? { ifNoneMatch: true } : {}),
    });
  } catch (error) {
    if (!(options.onlyIfAbsent && error instanceof AlreadyExists)) throw error;
  }
  await completeIfDone({
    run: message.backup,
    store: deps.store,
    callbacks: deps.callbacks,
    signal: deps.signal,
  });
}

/**
 * A message that failed every delivery lands in the dead-letter queue: its items are recorded
 * as errors by name, so the backup ends PartiallyFailed instead of waiting forever.
 */
export async function recordDeadLetter(
  message: ItemBlockMessage,
  deps: BackupItemBlockDeps,
): Promise<MessageResult> {
  let results: Results = emptyResults;
  const log: LogEvent[] = [];
  for (const block of message.blocks) {
    const described =
      'items' in block
        ? block.items
            .map(({ ref: r }) => `${r.resource}/${r.namespace ? `${r.namespace}/` : ''}${r.name}`)
            .join(', ')
        : `the items stored at ${block.itemsKey}`;
    const msg = `ItemBlock ${block.id} could not be backed up after repeated attempts: ${described}`;
    results = mergeResults(results, { errors: resultOf({ scope: 'velero', message: msg }), warnings: {} });
    log.push({
      time: deps.clock.now().toISOString(),
      level: 'error',
      msg,
      fields: { backup: message.backup.name, block: block.id },
    });
  }
  const { text: logText, levels: logLevels } = logTextOf(log);
  const result: MessageResult = {
    messageId: message.messageId,
    items: [],
    fragmentKey: null,
    ...results,
    logText,
    logLevels,
  };
  await writeResult({ message, result, deps, onlyIfAbsent: true });
  return result;
}
