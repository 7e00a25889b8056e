/**
 * What fires a Schedule: EventBridge Scheduler in AWS, a timer under `lifeboat server --local`.
 * A Schedule's cron may need several expressions (schedulerExpressions); the timer fires on their
 * union. Never starts a backup itself: it calls the fire-schedule use case.
 */

export interface ScheduleTimer {
  /** Creates the timer of a Schedule, or brings it to these expressions and state. */
  put(options: {
    name: string;
    expressions: readonly { expression: string; timezone: string }[];
    enabled: boolean;
    signal?: AbortSignal;
  }): Promise<void>;
  /** Removes the timer of a Schedule; one already gone is fine. */
  remove(options: { name: string; signal?: AbortSignal }): Promise<void>;
}
