/** Lambda entry on the ItemBlock dead-letter queue: records the lost items as errors. */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { safeParseItemBlockHeader } from '../../shared/contracts/item-block-wire.js';
import { logger } from '../../shared/runtime/logger.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { recordDeadLetter } from '../backup-item-block/backup-item-block.js';
import { callbacks, clock, store } from '../common/wiring.js';

const processor = new BatchProcessor(EventType.SQS);

export const handler = lambdaHandler('ItemBlockDeadLetters', async (event: SQSEvent, signal) =>
  processPartialResponse(
    event,
    async (record: SQSRecord) => {
      const parsed = safeParseItemBlockHeader(record.body);
      // Only the first line is needed to name the items, so a body whose item lines are damaged is
      // still recorded. One that is not an ItemBlock message cannot be tied to a backup; the
      // timeout fails that backup.
      if (!parsed.success)
        return logger.error('unreadable dead letter dropped', { messageId: record.messageId });
      await recordDeadLetter(parsed.data, { store, callbacks, clock, signal });
    },
    processor,
  ),
);
