/** Lambda entry of the ItemBlock workers: an SQS batch, reporting partial batch failures. */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { parseItemBlockMessage } from '../../shared/contracts/item-block-wire.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import {
  callbacks,
  clock,
  csiSnapshotsOf,
  env,
  podExecNamed,
  renewRun,
  snapshotter,
  store,
} from '../common/wiring.js';
import { backupItemBlocks } from './backup-item-block.js';

const processor = new BatchProcessor(EventType.SQS);

export const handler = lambdaHandler('BackupItemBlock', async (event: SQSEvent, signal) =>
  processPartialResponse(
    event,
    async (record: SQSRecord) => {
      const message = parseItemBlockMessage(record.body);
      await renewRun('backup', message.backup, signal);
      await backupItemBlocks(message, {
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
