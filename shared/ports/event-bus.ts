/**
 * Where Lifeboat says that a backup, restore or deletion ended: EventBridge in AWS (source
 * `lifeboat`), a file under the store locally (`lifeboat events`). Events carry names, phases
 * and counts, never the content of a cluster's objects.
 */
export interface LifeboatEvent {
  /** `Backup Completed`, `Restore PartiallyFailed`, `Deletion Failed`, … */
  readonly detailType: string;
  /** The Velero object's status and what names it (backup, restore, cluster, execution). */
  readonly detail: Readonly<Record<string, unknown>>;
  readonly time: Date;
}

export interface EventBus {
  publish(event: LifeboatEvent, options?: { signal?: AbortSignal }): Promise<void>;
}

export const EVENT_SOURCE = 'lifeboat';
