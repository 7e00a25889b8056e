/**
 * What fires a Schedule: EventBridge Scheduler in AWS (one Scheduler schedule per expression),
 * a timer in `lifeboat server --local`. The expressions come from
 * shared/domain/schedules/scheduler-expressions.ts; their union fires when the cron does.
 */

export interface TimerExpression {
  /** `cron(min hour dom month dow year)` or `rate(n unit)`, EventBridge Scheduler's syntax. */
  readonly expression: string;
  /** An IANA time zone (`UTC` unless the Schedule says `CRON_TZ=`). */
  readonly timezone: string;
}

export interface ScheduleTimer {
  /** Creates or updates the timer of a Schedule: its expressions, enabled unless paused. */
  put(options: {
    readonly name: string;
    readonly expressions: readonly TimerExpression[];
    readonly enabled: boolean;
    readonly signal?: AbortSignal;
  }): Promise<void>;
  /** Removes the timer of a Schedule; removing one that is not there is not an error. */
  remove(options: { readonly name: string; readonly signal?: AbortSignal }): Promise<void>;
}
