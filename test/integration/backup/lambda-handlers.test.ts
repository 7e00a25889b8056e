/**
 * The deployed entry points, run in-process as Lambda would run them, against moto: the
 * ItemBlock worker consumes real SQS messages, writes its fragment and result to S3, and reports
 * a malformed record as a partial batch failure; the dead-letter handler records lost items.
 */
import { gunzipSync } from 'node:zlib';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../../shared/adapters/s3-object-store.js';
import { SqsWorkQueue } from '../../../shared/adapters/sqs-work-queue.js';
import type { ItemBlockMessage } from '../../../shared/contracts/backup-run.js';
import { itemBlockMessageBody } from '../../../shared/contracts/item-block-wire.js';
import { backupWorkKeys } from '../../../shared/domain/storage/keys.js';
import { awsConfig, testEnv, uniqueName } from '../support/env.js';

type SqsHandler = (
  event: SQSEvent,
  context: Context,
) => Promise<{ batchItemFailures: { itemIdentifier: string }[] }>;

const context = {
  functionName: 'test',
  awsRequestId: 'req',
  getRemainingTimeInMillis: () => 60_000,
} as unknown as Context;

describe('the Lambda entry points of the ItemBlock queue', () => {
  let bucket: string;
  let queueUrl: string;
  let worker: SqsHandler;
  let deadLetters: SqsHandler;
  beforeAll(async () => {
    const env = testEnv();
    bucket = uniqueName('lambda');
    await new S3Client(awsConfig()).send(new CreateBucketCommand({ Bucket: bucket }));
    queueUrl =
      (await new SQSClient(awsConfig()).send(new CreateQueueCommand({ QueueName: uniqueName('blocks') })))
        .QueueUrl ?? '';
    Object.assign(process.env, {
      AWS_REGION: env.aws.region,
      AWS_ENDPOINT_URL: env.aws.endpoint,
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      LIFEBOAT_BUCKET: bucket,
      LIFEBOAT_PREFIX: 'cluster-a',
      LIFEBOAT_S3_FORCE_PATH_STYLE: 'true',
      ITEM_BLOCK_QUEUE_URL: queueUrl,
      POWERTOOLS_LOG_LEVEL: 'ERROR',
    });
    worker = (await import('../../../functions/backup-item-block/handler.js'))
      .handler as unknown as SqsHandler;
    deadLetters = (await import('../../../functions/item-block-dead-letters/handler.js'))
      .handler as unknown as SqsHandler;
  });

  const message = (messageId: string): ItemBlockMessage => ({
    backup: { name: 'nightly', runId: 'run-1', startedAt: '2026-01-01T00:00:00.000Z' },
    messageId,
    blocks: [
      {
        id: '0000001',
        items: [
          {
            ref: { group: '', version: 'v1', resource: 'configmaps', namespace: 'shop', name: 'settings' },
            kind: 'ConfigMap',
            preferred: true,
            json: JSON.stringify({
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: 'settings', namespace: 'shop' },
            }),
          },
        ],
      },
    ],
  });

  async function receive(count: number): Promise<SQSRecord[]> {
    const sqs = new SQSClient(awsConfig());
    const records: SQSRecord[] = [];
    while (records.length < count) {
      const got = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      );
      for (const m of got.Messages ?? []) {
        records.push({
          messageId: m.MessageId ?? '',
          receiptHandle: m.ReceiptHandle ?? '',
          body: m.Body ?? '',
        } as SQSRecord);
      }
    }
    return records;
  }

  const storeOf = () => new S3ObjectStore({ client: new S3Client(awsConfig()), bucket, prefix: 'cluster-a' });
  /** The result the handlers recorded for a message of backup `nightly`. */
  async function storedResult<T>(messageId: string): Promise<T> {
    const work = backupWorkKeys({ name: 'nightly', runId: 'run-1' });
    const raw = await storeOf().get(work.messageResult(messageId));
    return JSON.parse(gunzipSync(raw ?? new Uint8Array()).toString()) as T;
  }
  const deadLetter = (body: string) =>
    deadLetters({ Records: [{ messageId: 'm', receiptHandle: 'r', body } as SQSRecord] }, context);

  it('backs up a message from SQS and reports a malformed one as a batch item failure', async () => {
    await new SqsWorkQueue({ client: new SQSClient(awsConfig()), queueUrl }).send([
      itemBlockMessageBody(message('0000001')),
      '{"not":"a block"}',
    ]);
    const records = await receive(2);
    const response = await worker({ Records: records }, context);
    const malformed = records.find((r) => r.body.includes('not'));
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: malformed?.messageId }]);

    const store = storeOf();
    const result = await storedResult<{ items: unknown[]; fragmentKey: string }>('0000001');
    expect(result.items).toEqual([
      { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'settings' },
    ]);
    const fragment = gunzipSync((await store.get(result.fragmentKey)) ?? new Uint8Array()).toString('latin1');
    expect(fragment).toContain('resources/configmaps/namespaces/shop/settings.json');
    expect(fragment).toContain('resources/configmaps/v1-preferredversion/namespaces/shop/settings.json');
  });

  it('records the items of a dead letter as errors', async () => {
    const body = itemBlockMessageBody(message('0000002'));
    expect((await deadLetter(body)).batchItemFailures).toEqual([]);
    const result = await storedResult<{ errors: { velero: string[] } }>('0000002');
    expect(result.errors.velero[0]).toContain('configmaps/shop/settings');
  });

  it('names the items of a dead letter whose item lines are damaged, which the worker refuses', async () => {
    const whole = itemBlockMessageBody(message('0000003'));
    const body = whole.slice(0, whole.indexOf('\n'));
    // Beside a whole message, so that only it is reported (a batch that fails whole throws instead).
    const refused = await worker(
      {
        Records: [
          { messageId: 'w1', receiptHandle: 'r', body: itemBlockMessageBody(message('0000004')) },
          { messageId: 'w2', receiptHandle: 'r', body },
        ] as SQSRecord[],
      },
      context,
    );
    expect(refused.batchItemFailures).toEqual([{ itemIdentifier: 'w2' }]);
    expect((await deadLetter(body)).batchItemFailures).toEqual([]);
    const result = await storedResult<{ errors: { velero: string[] }; fragmentKey: string | null }>(
      '0000003',
    );
    expect(result.errors.velero[0]).toContain('configmaps/shop/settings');
    expect(result.fragmentKey).toBeNull();
  });
});
