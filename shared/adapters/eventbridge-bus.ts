/**
 * Lifeboat's events on EventBridge: PutEvents on the account's default bus (or the one named),
 * source `lifeboat`. An entry EventBridge did not take is an error, retried by the caller's
 * workflow; the SDK retries throttling and 5xx.
 */
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { RetryableError } from '../domain/errors.js';
import { EVENT_SOURCE, type EventBus, type LifeboatEvent } from '../ports/event-bus.js';

export class EventBridgeBus implements EventBus {
  constructor(
    private readonly client: EventBridgeClient,
    private readonly busName?: string,
  ) {}

  async publish(event: LifeboatEvent, options: { signal?: AbortSignal } = {}): Promise<void> {
    const answer = await this.client.send(
      new PutEventsCommand({
        Entries: [
          {
            Source: EVENT_SOURCE,
            DetailType: event.detailType,
            Detail: JSON.stringify(event.detail),
            Time: event.time,
            ...(this.busName ? { EventBusName: this.busName } : {}),
          },
        ],
      }),
      options.signal ? { abortSignal: options.signal } : {},
    );
    if ((answer.FailedEntryCount ?? 0) > 0) {
      const entry = answer.Entries?.[0];
      throw new RetryableError(
        `EventBridge did not take the event: ${entry?.ErrorCode ?? ''} ${entry?.ErrorMessage ?? ''}`,
      );
    }
  }
}

export function eventBridgeBus(options: { region: string; busName?: string }): EventBus {
  return new EventBridgeBus(
    new EventBridgeClient({ region: options.region, maxAttempts: 8 }),
    options.busName,
  );
}
