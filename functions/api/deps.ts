/** What the API's handlers work with: the store, the orchestrator, download links and the clusters served. */

import type { Clock } from '../../shared/ports/clock.js';
import type { DownloadLinks } from '../../shared/ports/download-links.js';
import type { Executions } from '../../shared/ports/executions.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { ScheduleTimer } from '../../shared/ports/scheduler.js';

export interface ApiDeps {
  readonly store: ObjectStore;
  readonly executions: Executions;
  readonly links: DownloadLinks;
  /** The clusters this deployment serves, by the names requests give. */
  readonly clusters: readonly string[];
  readonly signal?: AbortSignal;
  /** Named backup locations besides the deployment's own (`dr`: the DR source), read only. */
  readonly locations?: Readonly<Record<string, ObjectStore>>;
  /** Told of every request that failed unexpectedly (the handler logs it). */
  readonly onError?: (error: unknown) => void;
  /** What fires Schedules (EventBridge Scheduler in AWS); without it the schedule routes that change one answer 503. */
  readonly timer?: ScheduleTimer;
  /** The time the schedule routes go by (default: the machine's). */
  readonly clock?: Clock;
}

/** How long a download link works. */
export const LINK_SECONDS = 600;
