import { describe, expect, it } from 'vitest';
import { sleep, TaskPool } from '../../../../functions/data-mover/task-pool.js';

describe('the data mover’s task pool', () => {
  it('never has more tasks in flight than its limit, and runs them all', async () => {
    const pool = new TaskPool({ limit: 3 });
    let running = 0;
    let peak = 0;
    let done = 0;
    for (let i = 0; i < 20; i++) {
      await pool.run(async () => {
        running++;
        peak = Math.max(peak, running);
        await sleep(1 + (i % 3));
        running--;
        done++;
      });
    }
    await pool.drain();
    expect(peak).toBe(3);
    expect(done).toBe(20);
  });

  it('throws the first failure from drain and later runs, and aborts the tasks still running', async () => {
    const pool = new TaskPool({ limit: 2 });
    let aborted = false;
    await pool.run(async (signal) => {
      await new Promise<void>((resolve) =>
        signal.addEventListener('abort', () => {
          aborted = true;
          resolve();
        }),
      );
    });
    await pool.run(async () => {
      throw new Error('block 7 failed');
    });
    await expect(pool.run(async () => {})).rejects.toThrow('block 7 failed');
    await expect(pool.drain()).rejects.toThrow('block 7 failed');
    expect(aborted).toBe(true);
  });

  it('stops when the caller’s signal aborts', async () => {
    const controller = new AbortController();
    const pool = new TaskPool({ limit: 1, signal: controller.signal });
    await pool.run((signal) => sleep(10_000, signal));
    controller.abort(new Error('cancelled'));
    await expect(pool.drain()).rejects.toThrow('cancelled');
  });

  it('refuses a limit that is not a positive integer', () => {
    expect(() => new TaskPool({ limit: 0 })).toThrow(RangeError);
    expect(() => new TaskPool({ limit: 1.5 })).toThrow(RangeError);
  });
});
