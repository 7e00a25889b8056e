/** What CollectItems runs against: the cluster it lists, the store and queue it writes to. */
import type { Clock } from '../../shared/ports/clock.js';
import type { Cluster } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { TaskCallbacks } from '../../shared/ports/task-callbacks.js';
import type { WorkQueue } from '../../shared/ports/work-queue.js';

export interface CollectItemsDeps {
  readonly cluster: Cluster;
  readonly store: ObjectStore;
  readonly queue: WorkQueue;
  readonly callbacks: TaskCallbacks;
  readonly clock: Clock;
  readonly pageSize?: number;
  /** Largest message body; larger blocks go to the object store (SQS allows 256 KiB). */
  readonly maxMessageBytes?: number;
  readonly signal?: AbortSignal;
}
