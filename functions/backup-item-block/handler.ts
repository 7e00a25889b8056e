/** Lambda entry of the ItemBlock workers: an SQS batch, reporting partial batch failures. */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { parseItemBlockMessage } from '../../shared/contracts/item-block-wire.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { callbacks, clock, csiSnapshotsOf, env, podExecNamed, snapshotter, store } from '../common/wiring.js';
import { backupItemBlocks } from './backup-item-block.js';

const processor = new BatchProcessor(EventType.SQS);

export const handler = lambdaHandler('BackupItemBlock', async (event: SQSEvent, signal) =>
  processPartialResponse(
    event,
    async (record: SQSRecord) => {
      await backupItemBlocks(parseItemBlockMessage(record.body), {
        store,
        callbacks,
        clock,
        podExecFor: podExecNamed,
        snapshotter: snapshotter(),
        csiFor: csiSnapshotsOf,
        inlineHookLimitMs: env.LIFEBOAT_INLINE_HOOK_LIMIT_SECONDS * 1000,
        signal,
      });
    },
    processor,
  ),
);
