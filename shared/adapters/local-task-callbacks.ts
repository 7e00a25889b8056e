/**
 * Task tokens in one process: the local stand-in for Step Functions' SendTaskSuccess, so the
 * same `.waitForTaskToken` step runs under `lifeboat --local`.
 */
import type { TaskCallbacks } from '../ports/task-callbacks.js';

interface Waiter {
  resolve(output: unknown): void;
  reject(error: Error): void;
}

export class LocalTaskCallbacks implements TaskCallbacks {
  private readonly waiting = new Map<string, Waiter>();
  private readonly early = new Map<string, { ok: true; output: unknown } | { ok: false; error: Error }>();

  /** Resolves with the output given to `succeed`, or rejects with the `fail` error. */
  wait(token: string): Promise<unknown> {
    const settled = this.early.get(token);
    if (settled) {
      this.early.delete(token);
      return settled.ok ? Promise.resolve(settled.output) : Promise.reject(settled.error);
    }
    return new Promise((resolve, reject) => this.waiting.set(token, { resolve, reject }));
  }

  async succeed(token: string, output: unknown): Promise<void> {
    const waiter = this.waiting.get(token);
    this.waiting.delete(token);
    if (waiter) waiter.resolve(output);
    else if (!this.early.has(token)) this.early.set(token, { ok: true, output });
  }

  async fail(token: string, error: { name: string; cause: string }): Promise<void> {
    const err = Object.assign(new Error(error.cause), { name: error.name });
    const waiter = this.waiting.get(token);
    this.waiting.delete(token);
    if (waiter) waiter.reject(err);
    else if (!this.early.has(token)) this.early.set(token, { ok: false, error: err });
  }
}
