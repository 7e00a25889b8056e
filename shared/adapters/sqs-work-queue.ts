/** The ItemBlock queue on SQS: batches of ten, failed entries re-sent with backoff. */
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { RetryableError } from '../domain/errors.js';
import type { WorkQueue } from '../ports/work-queue.js';

const MAX_BATCH_BYTES = 256 * 1024;

export class SqsWorkQueue implements WorkQueue {
  private readonly client: SQSClient;
  private readonly queueUrl: string;

  constructor(options: { client: SQSClient; queueUrl: string }) {
    this.client = options.client;
    this.queueUrl = options.queueUrl;
  }

  async send(messages: readonly string[], options?: { signal?: AbortSignal }): Promise<void> {
    // SQS: at most ten entries and 256 KiB in all per batch.
    const batches: string[][] = [];
    let size = 0;
    for (const message of messages) {
      const bytes = Buffer.byteLength(message);
      const last = batches.at(-1);
      if (!last || last.length === 10 || size + bytes > MAX_BATCH_BYTES) {
        batches.push([message]);
        size = bytes;
      } else {
        last.push(message);
        size += bytes;
      }
    }
    for (const batch of batches) {
      let entries = batch.map((MessageBody, j) => ({ Id: String(j), MessageBody }));
      for (let attempt = 0; entries.length > 0; attempt++) {
        const res = await this.client.send(
          new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: entries }),
          {
            abortSignal: options?.signal,
          },
        );
        const failed = new Set((res.Failed ?? []).map((f) => f.Id));
        entries = entries.filter((e) => failed.has(e.Id));
        if (entries.length === 0) break;
        if (attempt >= 5) throw new RetryableError(`SQS refused ${entries.length} ItemBlock messages`);
        await new Promise((r) => setTimeout(r, 200 * 2 ** attempt));
      }
    }
  }
}
