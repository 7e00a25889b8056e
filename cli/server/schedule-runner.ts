/**
 * The timers of `lifeboat server --local`: what EventBridge Scheduler does in AWS. Each tick
 * fires every unpaused Schedule that is due, with the same cron code (nextFire), and runs garbage
 * collection when its interval has passed. As Velero, a Schedule's next run counts from its last
 * backup (or creation) and last skip, and missed runs are not made up: one firing, at the latest
 * time due. The clock is a port, so tests step it; the server ticks it every few seconds.
 */

import { collectGarbage, type GarbageReport } from '../../functions/collect-garbage/collect-garbage.js';
import { type FireOutcome, fireSchedule } from '../../functions/fire-schedule/fire-schedule.js';
import { listSchedules } from '../../functions/schedules/schedules.js';
import { cronOf, type StoredSchedule } from '../../shared/contracts/schedule.js';
import { nextFire } from '../../shared/domain/schedules/cron.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { Executions } from '../../shared/ports/executions.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';

/** Velero's `--garbage-collection-frequency` default. */
export const DEFAULT_GC_INTERVAL_MS = 3_600_000;

/** How many missed fire times a tick walks past at most before it gives up catching up. */
const MAX_MISSED = 100_000;

export interface TickResult {
  readonly fired: readonly {
    readonly schedule: string;
    readonly scheduledTime: Date;
    readonly outcome: FireOutcome;
  }[];
  readonly garbage?: GarbageReport;
}

export class ScheduleRunner {
  private lastGc: number;

  constructor(
    private readonly deps: {
      readonly store: ObjectStore;
      readonly executions: Executions;
      readonly clock: Clock;
      readonly gcIntervalMs?: number;
      readonly warn?: (message: string) => void;
    },
  ) {
    this.lastGc = deps.clock.now().getTime();
  }

  /** Fires what is due now and, when its interval has passed, collects garbage. */
  async tick(): Promise<TickResult> {
    const now = this.deps.clock.now();
    const fired: TickResult['fired'][number][] = [];
    for (const stored of await listSchedules(this.deps)) {
      const due = this.dueAt(stored, now);
      if (!due) continue;
      const name = stored.schedule.metadata.name;
      try {
        fired.push({
          schedule: name,
          scheduledTime: due,
          outcome: await fireSchedule({ schedule: name, scheduledTime: due }, this.deps),
        });
      } catch (error) {
        this.deps.warn?.(
          `schedule ${name} could not fire: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
    const interval = this.deps.gcIntervalMs ?? DEFAULT_GC_INTERVAL_MS;
    if (now.getTime() - this.lastGc < interval) return { fired };
    this.lastGc = now.getTime();
    return { fired, garbage: await collectGarbage({ dryRun: false }, this.deps) };
  }

  /** The latest fire time at or before now not yet fired, if any (Velero: no catch-up). */
  private dueAt(stored: StoredSchedule, now: Date): Date | undefined {
    const { schedule } = stored;
    if (schedule.spec.paused === true) return undefined;
    const status = schedule.status ?? {};
    const since = Math.max(
      ...[status.lastBackup, schedule.metadata.creationTimestamp, status.lastSkipped]
        .filter((t): t is string => t !== undefined)
        .map((t) => Date.parse(t)),
    );
    if (!Number.isFinite(since)) return undefined;
    const cron = cronOf(schedule);
    let due = nextFire(cron, new Date(since));
    if (due > now) return undefined;
    for (let i = 0; i < MAX_MISSED; i++) {
      const after = nextFire(cron, due);
      if (after > now) break;
      due = after;
    }
    return due;
  }
}
