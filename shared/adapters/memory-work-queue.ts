/**
 * The work queue in memory with a worker pool: the local stand-in for SQS and its Lambda
 * consumers. A failed delivery is retried up to `maxReceiveCount` times, each after a growing
 * wait (SQS's visibility timeout: a failure lasting a moment does not use up every receive at
 * once), then handed to the dead-letter handler, as an SQS redrive policy would; a dead-letter
 * handler that fails is tried again the same way (SQS keeps a dead letter until it is consumed).
 */
import type { WorkQueue } from '../ports/work-queue.js';

export interface MemoryWorkQueueOptions {
  readonly concurrency: number;
  readonly maxReceiveCount: number;
  readonly consume: (body: string) => Promise<void>;
  readonly deadLetter: (body: string, error: unknown) => Promise<void>;
  readonly onError?: (error: unknown) => void;
  /** `send` waits while this many messages are queued, so memory stays bounded. */
  readonly highWaterMark?: number;
  /** The wait before the first redelivery, doubled for each later one (default 250 ms). */
  readonly redeliveryDelayMs?: number;
}

/** Waits between redeliveries never grow past this. */
const MAX_REDELIVERY_DELAY_MS = 5_000;
/** Tries of the dead-letter handler before its failure is reported (onError). */
const DEAD_LETTER_TRIES = 6;

export class MemoryWorkQueue implements WorkQueue {
  private readonly pending: { body: string; receives: number }[] = [];
  private active = 0;
  private idleWaiters: (() => void)[] = [];
  private readonly options: MemoryWorkQueueOptions;

  constructor(options: MemoryWorkQueueOptions) {
    this.options = options;
  }

  private drainWaiters: (() => void)[] = [];

  async send(messages: readonly string[]): Promise<void> {
    for (const body of messages) this.pending.push({ body, receives: 0 });
    this.pump();
    const limit = this.options.highWaterMark ?? 64;
    while (this.pending.length >= limit)
      await new Promise<void>((resolve) => this.drainWaiters.push(resolve));
  }

  /** Resolves when nothing is queued or in flight. */
  idle(): Promise<void> {
    if (this.active === 0 && this.pending.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (this.active < this.options.concurrency && this.pending.length > 0) {
      const message = this.pending.shift();
      if (!message) break;
      this.active++;
      message.receives++;
      void this.deliver(message).finally(() => {
        this.active--;
        this.pump();
        for (const resolve of this.drainWaiters.splice(0)) resolve();
        if (this.active === 0 && this.pending.length === 0) {
          for (const resolve of this.idleWaiters.splice(0)) resolve();
        }
      });
    }
  }

  private async deliver(message: { body: string; receives: number }): Promise<void> {
    try {
      await this.options.consume(message.body);
    } catch (error) {
      if (message.receives < this.options.maxReceiveCount) {
        // Counted as in flight while it waits: idle() does not resolve before its redelivery.
        await this.wait(message.receives);
        this.pending.push(message);
        return;
      }
      await this.deadLetter(message.body, error);
    }
  }

  private async deadLetter(body: string, error: unknown): Promise<void> {
    for (let tries = 1; ; tries++) {
      try {
        await this.options.deadLetter(body, error);
        return;
      } catch (dlqError) {
        if (tries >= DEAD_LETTER_TRIES) {
          this.options.onError?.(dlqError);
          return;
        }
        await this.wait(tries);
      }
    }
  }

  private wait(attempt: number): Promise<void> {
    const first = this.options.redeliveryDelayMs ?? 250;
    const ms = Math.min(MAX_REDELIVERY_DELAY_MS, first * 2 ** (attempt - 1));
    return new Promise((resolve) => setTimeout(resolve, ms));
  }
}
