/**
 * The hook runner's use case: backs up one ItemBlock that a worker left in the working data
 * because its hooks may run longer than a Lambda can (e.g. a 1800 s freeze), with the very code
 * the worker uses (pre hooks → items → post hooks), and no time budget. Writes the block's
 * fragment and result beside the messages' results, where FinalizeBackup reads them.
 * Idempotent: a rerun rewrites the same keys. Hook failures are data in the result; only a
 * failure of the whole run (working data missing, store unreachable) throws.
 */
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import {
  type ItemBlockMessage,
  itemBlockPayload,
  type MessageResult,
} from '../../shared/contracts/backup-run.js';
import type { HookRunInput } from '../../shared/contracts/hook-run.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import { backupWorkKeys, DEFERRED_RESULT_INFIX } from '../../shared/domain/storage/keys.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { PodExec } from '../../shared/ports/pod-exec.js';
import {
  backUpBlock,
  emptyOutput,
  hookSettingsLoader,
  outputResult,
} from '../backup-item-block/item-block.js';
import type { BlockVolumesDeps } from '../backup-item-block/volumes.js';

const gzip = promisify(gzipCallback);

export interface HookRunnerDeps {
  readonly store: ObjectStore;
  readonly clock: Clock;
  readonly podExecFor: (cluster: string) => Promise<PodExec>;
  /** The block's volumes, as in the worker (volumes.ts): unset, their snapshots fail, saying so. */
  readonly snapshotter?: BlockVolumesDeps['snapshotter'];
  readonly csiFor?: BlockVolumesDeps['csiFor'];
  readonly signal?: AbortSignal;
}

export async function runDeferredBlock(
  input: Extract<HookRunInput, { block: string }>,
  deps: HookRunnerDeps,
): Promise<MessageResult> {
  const { run } = input;
  const [messageId = '', blockId = ''] = input.block.split('/');
  const work = backupWorkKeys(run);
  const raw = await deps.store.get(work.deferredBlock(messageId, blockId), { signal: deps.signal });
  if (!raw)
    throw new LifeboatError(
      `the deferred ItemBlock ${input.block} of backup ${run.name} is missing from the working data`,
    );
  const block = itemBlockPayload.parse(
    (JSON.parse(Buffer.from(raw).toString('utf8')) as { block?: unknown }).block,
  );
  const backup: ItemBlockMessage['backup'] = { name: run.name, runId: run.runId, startedAt: run.startedAt };
  const output = emptyOutput();
  output.log.push({
    time: deps.clock.now().toISOString(),
    level: 'info',
    msg: 'Long hook run of an ItemBlock started',
    fields: { backup: run.name, block: blockId },
  });
  await backUpBlock({
    block,
    backup,
    output,
    hookSettings: hookSettingsLoader({ backup, deps }),
    deps,
  });
  const result = await outputResult({
    output,
    backup,
    resultId: `${messageId}${DEFERRED_RESULT_INFIX}${blockId}`,
    store: deps.store,
  });
  await deps.store.put(work.deferredResult(messageId, blockId), await gzip(JSON.stringify(result)), {
    contentType: 'application/gzip',
  });
  return result;
}
