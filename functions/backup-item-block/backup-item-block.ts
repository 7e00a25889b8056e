/**
 * BackupItemBlock: the worker. For each ItemBlock of a message: pre hooks on the block's pods →
 * every item → post hooks (hooks arrive with their own feature), then one result per message
 * in the working data. Idempotent: a redelivered message rewrites the same result. A problem
 * with one item becomes an error in the result, never a failed block.
 */
import { gzipSync } from 'node:zlib';
import {
  type BlockItem,
  blockItem,
  type ItemBlockMessage,
  type MessageResult,
} from '../../shared/contracts/backup-run.js';
import type { LogEvent } from '../../shared/domain/backup-log.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import { emptyResults, mergeResults, type Results, resultOf } from '../../shared/domain/results.js';
import { backupWorkKeys } from '../../shared/domain/storage-keys.js';
import { entryNames } from '../../shared/domain/tarball-layout.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { TaskCallbacks } from '../../shared/ports/task-callbacks.js';
import { completeIfDone } from '../backup-completion.js';

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
  let results: Results = emptyResults;
  const items: MessageResult['items'] = [];
  const backupField = { backup: message.backup.name };
  for (const block of message.blocks) {
    const blockItems = await itemsOf(block, deps.store, deps.signal);
    for (const item of blockItems) {
      const { ref } = item;
      const scope = ref.namespace ? { namespace: ref.namespace } : ('cluster' as const);
      let object: { apiVersion?: unknown };
      try {
        object = JSON.parse(item.object) as { apiVersion?: unknown };
      } catch {
        const msg = `${ref.resource}/${ref.name}: the object read from the cluster is not valid JSON`;
        results = mergeResults(results, { errors: resultOf({ scope, message: msg }), warnings: {} });
        log.push({
          time: deps.clock.now().toISOString(),
          level: 'error',
          msg,
          fields: { ...backupField, block: block.id },
        });
        continue;
      }
      items.push({
        entryNames: entryNames(ref, { preferred: item.preferred }),
        apiVersion: typeof object.apiVersion === 'string' ? object.apiVersion : ref.version,
        kind: item.kind,
        namespace: ref.namespace,
        name: ref.name,
        object: item.object,
      });
      log.push({
        time: deps.clock.now().toISOString(),
        level: 'info',
        msg: 'Backed up item',
        fields: {
          ...backupField,
          resource: ref.group ? `${ref.resource}.${ref.group}` : ref.resource,
          namespace: ref.namespace,
          name: ref.name,
        },
      });
    }
  }
  const result: MessageResult = { messageId: message.messageId, items, ...results, log };
  await writeResult({ message, result, deps });
  return result;
}

async function writeResult(options: {
  message: ItemBlockMessage;
  result: MessageResult;
  deps: BackupItemBlockDeps;
}): Promise<void> {
  const { message, result, deps } = options;
  const work = backupWorkKeys(message.backup);
  await deps.store.put(work.messageResult(message.messageId), gzipSync(JSON.stringify(result)), {
    contentType: 'application/gzip',
  });
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
  const result: MessageResult = { messageId: message.messageId, items: [], ...results, log };
  await writeResult({ message, result, deps });
  return result;
}
