/**
 * The events of local runs (`lifeboat --local`, `lifeboat server --local`): each appended as one
 * line of JSON, shaped as EventBridge delivers an event (`source`, `detail-type`, `time`,
 * `detail`), to a file under the backup directory, which `lifeboat events` shows. One write per
 * event, appended, so concurrent runs never interleave within a line.
 */
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { LOCAL_EVENTS_KEY } from '../domain/storage/keys.js';
import { EVENT_SOURCE, type EventBus, type LifeboatEvent } from '../ports/event-bus.js';

export interface DeliveredEvent {
  readonly source: string;
  readonly 'detail-type': string;
  readonly time: string;
  readonly detail: Readonly<Record<string, unknown>>;
}

export class LocalEventFile implements EventBus {
  readonly path: string;

  /** `directory`: the backup directory (the store's root). */
  constructor(directory: string) {
    this.path = join(directory, LOCAL_EVENTS_KEY);
  }

  async publish(event: LifeboatEvent): Promise<void> {
    const line: DeliveredEvent = {
      source: EVENT_SOURCE,
      'detail-type': event.detailType,
      time: event.time.toISOString(),
      detail: event.detail,
    };
    await mkdir(dirname(this.path), { recursive: true });
    await appendFile(this.path, `${JSON.stringify(line)}\n`);
  }

  /** Every event published so far, oldest first. */
  async read(): Promise<DeliveredEvent[]> {
    const text = await readFile(this.path, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return '';
      throw error;
    });
    return text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as DeliveredEvent);
  }
}
