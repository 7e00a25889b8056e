/**
 * The local server's schedule and GC timers on the wall clock: a ScheduleRunner ticked every
 * few seconds, one tick at a time (a slow tick delays the next, never overlaps it).
 */
import { systemClock } from '../../shared/adapters/system-clock.js';
import { parseDuration } from '../../shared/domain/kubernetes/duration.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { ScheduleTimer } from '../../shared/ports/scheduler.js';
import { UsageError } from '../flags.js';
import type { Io } from '../verb-call.js';
import type { LocalExecutions } from './local-executions.js';
import { DEFAULT_GC_INTERVAL_MS, ScheduleRunner } from './schedule-runner.js';

const TICK_MS = 5_000;

/** The API's timer here: these timers read the Schedules from the directory, nothing to put or remove. */
export const storeReadTimer: ScheduleTimer = { put: async () => undefined, remove: async () => undefined };

export function gcIntervalOf(text: string | undefined): number {
  if (text === undefined) return DEFAULT_GC_INTERVAL_MS;
  const ms = parseDuration(text);
  if (ms === undefined || ms < 1000)
    throw new UsageError(
      `--gc-interval must be a duration of a second or more such as 1h, not ${JSON.stringify(text)}`,
    );
  return ms;
}

export function startScheduleTimers(options: {
  readonly store: ObjectStore;
  readonly executions: LocalExecutions;
  readonly values: { readonly 'gc-interval'?: string };
  readonly io: Io;
}): { stop(): void } {
  const warn = (message: string) => options.io.err.write(`lifeboat server: ${message}\n`);
  const runner = new ScheduleRunner({
    store: options.store,
    executions: options.executions,
    clock: systemClock,
    gcIntervalMs: gcIntervalOf(options.values['gc-interval']),
    warn,
  });
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const loop = () => {
    timer = setTimeout(async () => {
      try {
        await runner.tick();
      } catch (error) {
        warn(`the schedule timers failed a tick: ${error instanceof Error ? error.message : String(error)}`);
      }
      if (!stopped) loop();
    }, TICK_MS);
  };
  loop();
  return {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
