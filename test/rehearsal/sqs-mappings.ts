/**
 * Lambda's SQS event source mappings, as the rehearsal runs them: for each enabled mapping of the
 * template, pollers receive batches (the mapping's BatchSize, up to 10 a receive) with the
 * function's role — through the gateway, so the role must allow sqs:ReceiveMessage and the key's
 * kms:Decrypt — invoke the function with Lambda's SQS event, and delete what succeeded: every
 * record, or, with ReportBatchItemFailures, all but the batchItemFailures; a failed invocation
 * deletes nothing. What is not deleted comes back after the queue's visibility timeout and, past
 * the redrive policy's maxReceiveCount, moto moves it to the dead-letter queue, whose own mapping
 * then runs its consumer.
 */
import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { Deployment } from './deploy.js';
import type { LambdaService } from './lambda.js';
import { type Json, resolveString, resourcesOf } from './template.js';

export interface EventSourceMapping {
  readonly functionName: string;
  readonly queueArn: string;
  readonly queueUrl: string;
  readonly batchSize: number;
  readonly batchingWindowSeconds: number;
  readonly reportBatchItemFailures: boolean;
}

export function mappingsOf(deployment: Deployment): EventSourceMapping[] {
  const { resolver, assembly } = deployment;
  return resourcesOf(assembly.template, 'AWS::Lambda::EventSourceMapping')
    .filter(([, r]) => r.Properties?.Enabled !== false)
    .map(([, r]) => {
      const p = r.Properties ?? {};
      const queueArn = resolveString(resolver, p.EventSourceArn ?? null);
      const queue = [...resolver.physical.values()].find((q) => q.attributes.Arn === queueArn);
      return {
        functionName: resolveString(resolver, p.FunctionName ?? null),
        queueArn,
        queueUrl: queue?.attributes.QueueUrl ?? '',
        batchSize: Number(p.BatchSize ?? 10),
        batchingWindowSeconds: Number(p.MaximumBatchingWindowInSeconds ?? 0),
        reportBatchItemFailures: ((p.FunctionResponseTypes ?? []) as Json[]).includes(
          'ReportBatchItemFailures',
        ),
      };
    });
}

function recordOf(message: Message, mapping: EventSourceMapping, region: string) {
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: message.Attributes ?? {},
    messageAttributes: message.MessageAttributes ?? {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: mapping.queueArn,
    awsRegion: region,
  };
}

/** Polls one mapping until stopped. */
class Poller {
  private stopped = false;
  private loop: Promise<void> | undefined;
  /** The receive in flight, if any: it carries the visibility timeout it was started with. */
  receiving: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly mapping: EventSourceMapping,
    private readonly options: {
      sqs: SQSClient;
      lambda: LambdaService;
      region: string;
      onError: (e: Error) => void;
      /** A shorter visibility timeout than the queue's, when a test speeds redelivery up. */
      visibility: () => number | undefined;
    },
  ) {}

  start(): void {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.once();
      } catch (error) {
        this.options.onError(error as Error);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  private async receive(): Promise<Message[]> {
    const received = this.options.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.mapping.queueUrl,
        MaxNumberOfMessages: Math.min(10, this.mapping.batchSize),
        WaitTimeSeconds: 1,
        ...(this.options.visibility() !== undefined ? { VisibilityTimeout: this.options.visibility() } : {}),
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    this.receiving = received.catch(() => undefined);
    const { Messages } = await received;
    return Messages ?? [];
  }

  private async once(): Promise<void> {
    const messages = await this.receive();
    if (messages.length === 0) return;
    const records = messages.map((m) => recordOf(m, this.mapping, this.options.region));
    const result = await this.options.lambda.invoke(this.mapping.functionName, {
      Records: records,
    } as unknown as Json);
    if (!result.ok) return;
    const failed = new Set(
      this.mapping.reportBatchItemFailures
        ? (
            (result.value as { batchItemFailures?: { itemIdentifier?: string }[] } | null)
              ?.batchItemFailures ?? []
          ).map((f) => f.itemIdentifier)
        : [],
    );
    const done = messages.filter((m) => !failed.has(m.MessageId));
    if (done.length === 0) return;
    await this.options.sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: this.mapping.queueUrl,
        Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? '' })),
      }),
    );
  }
}

export interface EventSources {
  stop(): Promise<void>;
  /**
   * Time compression for tests of redelivery: a message not deleted comes back after `seconds`
   * instead of the queue's visibility timeout (16 minutes for the ItemBlock queue); undefined
   * restores the queue's own.
   */
  redeliverAfter(seconds: number | undefined): Promise<void>;
}

/** Starts every mapping's pollers (a few per mapping, as Lambda scales them). */
export async function startEventSources(options: {
  deployment: Deployment;
  lambda: LambdaService;
  gateway: string;
  pollersPerMapping?: number;
  onError: (error: Error) => void;
}): Promise<EventSources> {
  const { deployment, lambda } = options;
  const pollers: Poller[] = [];
  let visibilitySeconds: number | undefined;
  for (const mapping of mappingsOf(deployment)) {
    const fn = lambda.functionNamed(mapping.functionName);
    // Lambda polls with the function's execution role.
    const credentials = await deployment.assume({
      roleArn: fn.roleArn,
      caller: `event source mapping (${fn.name})`,
    });
    const sqs = new SQSClient({
      endpoint: options.gateway,
      region: deployment.target.region,
      credentials,
    });
    for (let i = 0; i < (options.pollersPerMapping ?? 2); i++) {
      const poller = new Poller(mapping, {
        sqs,
        lambda,
        region: deployment.target.region,
        onError: options.onError,
        visibility: () => visibilitySeconds,
      });
      poller.start();
      pollers.push(poller);
    }
  }
  return {
    stop: async () => void (await Promise.all(pollers.map((p) => p.stop()))),
    redeliverAfter: async (seconds) => {
      visibilitySeconds = seconds;
      // A receive already waiting would still hide what it gets for the queue's own timeout.
      await Promise.all(pollers.map((p) => p.receiving));
    },
  };
}
