/**
 * BackupItemBlock: the worker. For each ItemBlock of a message: pre hooks on the block's pods →
 * every item → post hooks (block-hooks.ts). The message's tar entries go to the working data as
 * one gzip member (a fragment of the final tarball), with a result listing the items, errors,
 * log and hook counts. A block whose hooks could outlast this worker (their timeouts past the
 * inline limit) is not run here: it is left in the working data for a long hook run (the hook
 * runner, functions/hook-runner), which backs it up with this same code. Idempotent: a
 * redelivered message rewrites the same fragment and result (its hooks run again, as in Velero).
 * A problem with one item becomes an error in the result, never a failed block.
 */
import type { ItemBlockMessage, MessageResult } from '../../shared/contracts/backup-run.js';
import type { ItemBlockHeader } from '../../shared/contracts/item-block-wire.js';
import { AlreadyExists } from '../../shared/domain/errors.js';
import { formatDuration } from '../../shared/domain/kubernetes/duration.js';
import { backupWorkKeys } from '../../shared/domain/storage/keys.js';
import { type LogEvent, logTextOf } from '../../shared/domain/storage/log.js';
import { emptyResults, mergeResults, type Results, resultOf } from '../../shared/domain/storage/results.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { PodExec } from '../../shared/ports/pod-exec.js';
import type { TaskCallbacks } from '../../shared/ports/task-callbacks.js';
import { completeIfDone } from '../common/backup-completion.js';
import { gzipFast } from '../common/gzip.js';
import { backUpBlock, emptyOutput, hookSettingsLoader, outputResult } from './item-block.js';
import type { BlockVolumesDeps } from './volumes.js';

/**
 * How long the hooks of one message may run in a worker before its blocks go to a long hook
 * run: a Lambda lives at most 900 s, and the items need time too.
 */
export const DEFAULT_INLINE_HOOK_LIMIT_MS = 600_000;

/** What recording a result needs (the dead-letter handler needs no more). */
export interface ResultDeps {
  readonly store: ObjectStore;
  readonly callbacks: TaskCallbacks;
  readonly clock: Clock;
  readonly signal?: AbortSignal;
}

export interface BackupItemBlockDeps extends ResultDeps {
  /** Pod exec on the backed-up cluster (by the request's cluster name); asked for only when hooks run. */
  readonly podExecFor: (cluster: string) => Promise<PodExec>;
  /** See DEFAULT_INLINE_HOOK_LIMIT_MS. */
  readonly inlineHookLimitMs?: number;
  /** EC2 for native EBS snapshots and CSI on the cluster (volumes.ts). */
  readonly snapshotter?: BlockVolumesDeps['snapshotter'];
  readonly csiFor?: BlockVolumesDeps['csiFor'];
  /** Which fs-backup volumes' files the data mover can read (volumes.ts). */
  readonly fileAccess?: BlockVolumesDeps['fileAccess'];
}

export async function backupItemBlocks(
  message: ItemBlockMessage,
  deps: BackupItemBlockDeps,
): Promise<MessageResult> {
  const output = emptyOutput();
  const hookSettings = hookSettingsLoader({ backup: message.backup, deps });
  const limitMs = deps.inlineHookLimitMs ?? DEFAULT_INLINE_HOOK_LIMIT_MS;
  const work = backupWorkKeys(message.backup);
  let spentMs = 0;
  for (const block of message.blocks) {
    const done = await backUpBlock({
      block,
      backup: message.backup,
      output,
      hookSettings,
      deps,
      budgetMs: Math.max(0, limitMs - spentMs),
    });
    if (!done.deferred) {
      // Charged at the plan's worst case, not the time the hooks took: a redelivered message
      // defers exactly the blocks its first delivery deferred, so no block is backed up twice.
      spentMs += done.worstCaseMs;
      continue;
    }
    // Written before this message's result: once every message has a result, the wait's output
    // lists this block for the LongHookBlocks stage.
    await deps.store.put(
      work.deferredBlock(message.messageId, block.id),
      JSON.stringify({ messageId: message.messageId, block }),
      {
        contentType: 'application/json',
      },
    );
    output.log.push({
      time: deps.clock.now().toISOString(),
      level: 'info',
      msg: 'ItemBlock left for a long hook run: its hooks may take longer than a worker may run',
      fields: {
        backup: message.backup.name,
        block: block.id,
        hooksUpTo: formatDuration(done.worstCaseMs),
        inlineLimit: formatDuration(limitMs),
      },
    });
  }
  const result = await outputResult({
    output,
    backup: message.backup,
    resultId: message.messageId,
    store: deps.store,
  });
  await writeResult({ message, result, deps });
  return result;
}

async function writeResult(options: {
  message: Pick<ItemBlockMessage, 'backup' | 'messageId'>;
  result: MessageResult;
  deps: ResultDeps;
  /** A dead letter never replaces the result of a delivery that did succeed. */
  onlyIfAbsent?: boolean;
}): Promise<void> {
  const { message, result, deps } = options;
  const work = backupWorkKeys(message.backup);
  try {
    await deps.store.put(work.messageResult(message.messageId), await gzipFast(JSON.stringify(result)), {
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
  message: ItemBlockHeader,
  deps: ResultDeps & {
    /** The last delivery's error, where the queue knows it (the local runtime's; SQS does not). */
    readonly lastError?: unknown;
  },
): Promise<MessageResult> {
  const last = deps.lastError === undefined ? '' : ` (last error: ${errorText(deps.lastError)})`;
  let results: Results = emptyResults;
  const log: LogEvent[] = [];
  for (const block of message.blocks) {
    const described =
      'items' in block
        ? block.items
            .map(({ ref: r }) => `${r.resource}/${r.namespace ? `${r.namespace}/` : ''}${r.name}`)
            .join(', ')
        : `the items stored at ${block.itemsKey}`;
    const msg = `ItemBlock ${block.id} could not be backed up after repeated attempts: ${described}${last}`;
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

/** An error as one line: its name and message, never a stack. */
function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error).split('\n')[0] ?? '';
  return `${error.name}: ${error.message.split('\n')[0] ?? ''}`;
}
