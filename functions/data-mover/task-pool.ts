/**
 * Bounded concurrency for the data mover: at most `limit` tasks in flight; `run` waits for a free
 * slot, so a producer cannot get ahead of the work (memory stays bounded by the limit). The first
 * failure aborts the tasks still running (through the signal each one gets) and is what `drain`
 * and later `run` calls throw. Never leaves a task running after `drain` returns or throws.
 */
import { setMaxListeners } from 'node:events';
export class TaskPool {
  private readonly limit: number;
  private readonly controller = new AbortController();
  private readonly running = new Set<Promise<void>>();
  private failure: { error: unknown } | undefined;
  private readonly onOuterAbort: () => void;
  private readonly outer: AbortSignal | undefined;

  constructor(options: { limit: number; signal?: AbortSignal }) {
    if (!Number.isInteger(options.limit) || options.limit < 1)
      throw new RangeError(`concurrency must be a positive integer, not ${options.limit}`);
    this.limit = options.limit;
    // Every call in flight listens on the one signal (the SDK, the repository): not a leak.
    setMaxListeners(options.limit * 4 + 16, this.controller.signal);
    this.outer = options.signal;
    this.onOuterAbort = () => this.controller.abort(options.signal?.reason);
    if (options.signal?.aborted) this.controller.abort(options.signal.reason);
    else options.signal?.addEventListener('abort', this.onOuterAbort, { once: true });
  }

  /** Aborted when the caller's signal is, or when a task failed. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  private check(): void {
    if (this.failure) throw this.failure.error;
    if (this.controller.signal.aborted) throw this.controller.signal.reason;
  }

  /** Starts the task once a slot is free; resolves when it has started, not when it ends. */
  async run(task: (signal: AbortSignal) => Promise<void>): Promise<void> {
    while (this.running.size >= this.limit) {
      await Promise.race(this.running);
      this.check();
    }
    this.check();
    const promise: Promise<void> = task(this.controller.signal)
      .catch((error: unknown) => {
        if (!this.failure) {
          this.failure = { error };
          this.controller.abort(error);
        }
      })
      .finally(() => {
        this.running.delete(promise);
      });
    this.running.add(promise);
  }

  /** Waits for every started task; throws the first failure (or the abort's reason). */
  async drain(): Promise<void> {
    try {
      while (this.running.size > 0) await Promise.race(this.running);
      this.check();
    } finally {
      this.outer?.removeEventListener('abort', this.onOuterAbort);
    }
  }

  /** Stops waiting callers and running tasks after a failure outside the pool, then waits them out. */
  async abort(reason: unknown): Promise<void> {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
    while (this.running.size > 0) await Promise.race(this.running);
    this.outer?.removeEventListener('abort', this.onOuterAbort);
  }
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
