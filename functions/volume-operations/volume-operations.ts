/**
 * VolumeOperations: one look at every volume operation the workers started (EBS snapshots by
 * DescribeSnapshots, CSI VolumeSnapshots and their contents by the Kubernetes API), recorded in
 * the working data, then back to the state machine, which waits and calls again until all have
 * settled (Completed or Failed, a timeout being a failure). Re-entrant: each call starts from the
 * recorded progress, so no invocation holds a Lambda while a snapshot runs. The first call of an
 * attempt gathers the operations from the blocks' volume records. A CSI snapshot's content is
 * kept (`deletionPolicy: Retain`) as soon as it is bound, as Velero keeps it; once all have
 * settled, the VolumeSnapshots and their contents are removed from the cluster, the storage
 * snapshots kept, as Velero does when the backup finalizes. Volumes whose data moves into the
 * repository (snapshotMoveData once their snapshot completed, fs-backup at once) are handed to
 * the data mover as jobs the state machine runs (data-movements.ts); the call after they ran
 * records how each ended. Done once every operation and every movement has settled.
 */

import { type BackupRun, collectedSummary } from '../../shared/contracts/backup-run.js';
import {
  type BlockVolumes,
  blockVolumes,
  type DataMovement,
  type OperationStatus,
  type VolumeOperation,
  type VolumeOperationsOutcome,
  type VolumeOperationsProgress,
  type VolumeSettings,
  volumeOperationsProgress,
} from '../../shared/contracts/backup-volumes.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import { backupWorkKeys } from '../../shared/domain/storage/keys.js';
import {
  csiOperationStatus,
  ebsOperationStatus,
  isSettled,
  nextPollSeconds,
  startedStatus,
} from '../../shared/domain/volumes/operations.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { CsiSnapshots } from '../../shared/ports/csi-snapshots.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { SnapshotCopies } from '../../shared/ports/snapshot-copies.js';
import type { Snapshotter } from '../../shared/ports/snapshotter.js';
import { readVolumeSettings } from '../common/volume-settings.js';
import { advanceMovements, type DataMoverAccess, gatherMovements } from './data-movements.js';
import { advanceCopies, copySettled, gatherCopies } from './snapshot-copies.js';

export interface VolumeOperationsDeps {
  readonly store: ObjectStore;
  readonly clock: Clock;
  readonly snapshotter?: Snapshotter;
  /** The repository the data mover writes; unset, volumes to move fail, saying so. */
  readonly dataMover?: DataMoverAccess;
  /** CSI snapshots on the backed-up cluster, by its name; asked for only when CSI operations exist. */
  readonly csiFor?: (cluster: string) => Promise<CsiSnapshots>;
  /** Shares and copies completed EBS snapshots into copySnapshots' targets; unset, those copies fail. */
  readonly snapshotCopies?: SnapshotCopies;
  /** The first wait between looks (Velero polls operations every 10 s). */
  readonly pollSeconds?: number;
  /** At most this many operations are looked at in parallel. */
  readonly concurrency?: number;
  readonly signal?: AbortSignal;
}

async function readJson(store: ObjectStore, key: string, signal?: AbortSignal): Promise<unknown> {
  const raw = await store.get(key, signal ? { signal } : {});
  return raw ? JSON.parse(Buffer.from(raw).toString('utf8')) : undefined;
}

/** Every block volume record of the attempt whose wait completed. */
export async function readBlockVolumes(options: {
  run: Pick<BackupRun, 'name' | 'runId'>;
  store: ObjectStore;
  attempt: string;
  signal?: AbortSignal;
}): Promise<BlockVolumes[]> {
  const work = backupWorkKeys(options.run);
  const keys = await options.store.list(`${work.volumesDir}${options.attempt}-`, {
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const out: BlockVolumes[] = [];
  for (const key of keys) out.push(blockVolumes.parse(await readJson(options.store, key, options.signal)));
  return out;
}

async function attemptOf(store: ObjectStore, run: BackupRun, signal?: AbortSignal): Promise<string> {
  const raw = await readJson(store, backupWorkKeys(run).collected, signal);
  if (raw === undefined) throw new LifeboatError(`the collection summary of backup ${run.name} is missing`);
  return collectedSummary.parse(raw).attempt;
}

export async function readVolumeProgress(options: {
  run: Pick<BackupRun, 'name' | 'runId'>;
  store: ObjectStore;
  signal?: AbortSignal;
}): Promise<VolumeOperationsProgress | undefined> {
  const raw = await readJson(options.store, backupWorkKeys(options.run).volumeOperations, options.signal);
  return raw === undefined ? undefined : volumeOperationsProgress.parse(raw);
}

/** Runs `look` over the items, at most `limit` at once, in order. */
async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  look: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T;
      await look(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/**
 * Velero (DeleteReadyVolumeSnapshot, when the backup finalizes): each CSI snapshot's
 * VolumeSnapshot and content leave the cluster once the backup has recorded the snapshot handle;
 * the content is set to Retain first, so the storage snapshot stays for restores. A VolumeSnapshot
 * never bound to a content is left in place; a failure is a warning. Done once per operation.
 */
async function cleanUpCsiSnapshots(options: {
  entries: VolumeOperationsProgress['operations'];
  csiOf: () => Promise<CsiSnapshots | undefined>;
  now: Date;
  signal: AbortSignal | undefined;
}): Promise<void> {
  const time = options.now.toISOString();
  for (const entry of options.entries) {
    if (entry.operation.method !== 'csi' || entry.cleanup) continue;
    const { Namespace: namespace, Name: name } = entry.operation.resource;
    const contentName = entry.status.csi?.vscName;
    if (!contentName) {
      entry.cleanup = {
        time,
        level: 'warning',
        message: `VolumeSnapshot ${namespace}/${name} is left in the cluster: it was never bound to a VolumeSnapshotContent`,
      };
      continue;
    }
    try {
      const api = await options.csiOf();
      if (!api) throw new LifeboatError('no access to the cluster');
      await api.deleteVolumeSnapshot({
        namespace,
        name,
        contentName,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      entry.cleanup = {
        time,
        level: 'info',
        message: `Deleted VolumeSnapshot ${namespace}/${name} and VolumeSnapshotContent ${contentName}; the snapshot ${entry.status.csi?.snapshotHandle ?? ''} is kept`,
      };
    } catch (error) {
      if (!(error instanceof LifeboatError)) throw error;
      entry.cleanup = {
        time,
        level: 'warning',
        message: `Failed to delete VolumeSnapshot ${namespace}/${name} and VolumeSnapshotContent ${contentName}: ${error.message}`,
      };
    }
  }
}

/** The operations of an attempt's first call: gathered from the blocks' volume records, each just started. */
function firstProgress(options: {
  attempt: string;
  blocks: BlockVolumes[];
  backupName: string;
  now: Date;
}): VolumeOperationsProgress {
  const { blocks, now } = options;
  const operations = blocks.flatMap((b) => b.handled.flatMap((h) => (h.operation ? [h.operation] : [])));
  return {
    attempt: options.attempt,
    polls: 0,
    operations: operations.map((operation) => ({ operation, status: startedStatus(operation) })),
    movements: gatherMovements({ blocks, backupName: options.backupName, now }),
  };
}

/** What every look of one call shares. */
interface LookContext {
  readonly deps: VolumeOperationsDeps;
  readonly settings: VolumeSettings;
  readonly csiOf: () => Promise<CsiSnapshots | undefined>;
  readonly now: Date;
}

/** An EBS snapshot's status, from DescribeSnapshots. */
async function lookAtEbsSnapshot(
  context: LookContext,
  entry: { operation: VolumeOperation; previous: OperationStatus },
): Promise<OperationStatus> {
  const { operation, previous } = entry;
  const { snapshotter, signal } = context.deps;
  if (!snapshotter)
    return {
      ...previous,
      phase: 'Failed',
      error: 'no EBS snapshotter is configured to follow the snapshot',
    };
  const seen = await snapshotter.snapshotProgress(operation.operationId, signal ? { signal } : {});
  return ebsOperationStatus({
    operation,
    previous,
    look: {
      state: seen.state,
      ...(seen.percent === undefined ? {} : { percent: seen.percent }),
      ...(seen.stateMessage ? { stateMessage: seen.stateMessage } : {}),
      ...(seen.startTime ? { startTime: seen.startTime } : {}),
    },
    now: context.now,
    timeoutMs: context.settings.itemOperationTimeoutSeconds * 1000,
  });
}

/** A CSI snapshot's status, from its VolumeSnapshot and bound content; the content is set to Retain. */
async function lookAtCsiSnapshot(
  context: LookContext,
  entry: { operation: VolumeOperation; previous: OperationStatus },
): Promise<OperationStatus> {
  const { operation, previous } = entry;
  const { signal } = context.deps;
  const api = await context.csiOf();
  if (!api)
    return { ...previous, phase: 'Failed', error: 'no access to the cluster to follow the CSI snapshot' };
  const ref = {
    namespace: operation.resource.Namespace,
    name: operation.resource.Name,
    ...(signal ? { signal } : {}),
  };
  const snapshot = await api.readVolumeSnapshot(ref);
  const contentName = snapshot.boundContentName;
  let content = contentName
    ? await api.readVolumeSnapshotContent({ name: contentName, ...(signal ? { signal } : {}) })
    : undefined;
  if (contentName && content && content.deletionPolicy !== 'Retain') {
    // Velero keeps the snapshot for the backup's lifetime, whatever the class says.
    await api.retainContent({ name: contentName, ...(signal ? { signal } : {}) });
    content = { ...content, deletionPolicy: 'Retain' };
  }
  return csiOperationStatus({
    operation,
    previous,
    snapshot,
    ...(content ? { content } : {}),
    now: context.now,
    timeoutMs: context.settings.csiSnapshotTimeoutSeconds * 1000,
  });
}

/** One look at each operation not settled yet, a few at once; each entry's status is updated in place. */
async function lookAtPending(
  context: LookContext,
  entries: VolumeOperationsProgress['operations'],
): Promise<void> {
  const { now } = context;
  const pending = entries.filter((e) => !isSettled(e.status));
  await eachLimited(pending, context.deps.concurrency ?? 8, async (entry) => {
    try {
      const look = { operation: entry.operation, previous: entry.status };
      entry.status =
        entry.operation.method === 'native'
          ? await lookAtEbsSnapshot(context, look)
          : await lookAtCsiSnapshot(context, look);
    } catch (error) {
      // A transient failure leaves the operation as it was: the next look tries again, and the
      // timeout still bounds it. A refusal settles it as failed.
      if (error instanceof LifeboatError && error.retryable) return;
      if (!(error instanceof LifeboatError)) throw error;
      entry.status = { ...entry.status, phase: 'Failed', error: error.message, updated: now.toISOString() };
    }
  });
}

/** Where the operations and movements stand after this call, and how long to wait before the next. */
function outcomeOf(options: {
  entries: VolumeOperationsProgress['operations'];
  copies: NonNullable<VolumeOperationsProgress['copies']>;
  movements: readonly DataMovement[];
  moveJobs: VolumeOperationsOutcome['moveJobs'];
  now: Date;
  pollSeconds: number;
}): VolumeOperationsOutcome {
  const { entries, movements, now } = options;
  const settled = entries.filter((e) => isSettled(e.status));
  const stillPending = entries.filter((e) => !isSettled(e.status));
  const moving = movements.filter((m) => m.state === 'Waiting' || m.state === 'Ready');
  const copying = options.copies.filter((c) => !copySettled(c)).length;
  const oldest = Math.min(
    ...stillPending.map((e) => new Date(e.operation.createdAt).getTime()),
    now.getTime(),
  );
  return {
    done: stillPending.length === 0 && moving.length === 0 && copying === 0,
    total: entries.length + movements.length + options.copies.length,
    completed:
      settled.filter((e) => e.status.phase === 'Completed').length +
      movements.filter((m) => m.state === 'Completed').length +
      options.copies.filter((c) => c.Phase === 'Completed').length,
    failed:
      settled.filter((e) => e.status.phase === 'Failed').length +
      movements.filter((m) => m.state === 'Failed').length +
      options.copies.filter((c) => c.Phase === 'Failed').length,
    pending: stillPending.length + moving.length + copying,
    waitSeconds: nextPollSeconds({ waitedMs: now.getTime() - oldest, base: options.pollSeconds }),
    moveJobs: options.moveJobs,
  };
}

export async function volumeOperations(
  input: { run: BackupRun; moved?: readonly { jobId: string; error?: string }[] },
  deps: VolumeOperationsDeps,
): Promise<VolumeOperationsOutcome> {
  const { run } = input;
  const { store, signal } = deps;
  const work = backupWorkKeys(run);
  const attempt = await attemptOf(store, run, signal);
  const recorded = await readVolumeProgress({ run, store, ...(signal ? { signal } : {}) });
  const now = deps.clock.now();
  let blocks: BlockVolumes[] | undefined;
  const blocksOf = async (): Promise<BlockVolumes[]> => {
    blocks ??= await readBlockVolumes({ run, store, attempt, ...(signal ? { signal } : {}) });
    return blocks;
  };
  let progress =
    recorded && recorded.attempt === attempt
      ? recorded
      : firstProgress({ attempt, blocks: await blocksOf(), backupName: run.name, now });
  const settings = await readVolumeSettings({ run, store, ...(signal ? { signal } : {}) });
  let csi: CsiSnapshots | undefined;
  const csiOf = async (): Promise<CsiSnapshots | undefined> => {
    if (!csi && deps.csiFor && settings.cluster) csi = await deps.csiFor(settings.cluster);
    return csi;
  };
  const entries = progress.operations;
  await lookAtPending({ deps, settings, csiOf, now }, entries);
  if (entries.every((e) => isSettled(e.status))) await cleanUpCsiSnapshots({ entries, csiOf, now, signal });
  const movements = progress.movements ?? [];
  const moveJobs = await advanceMovements({
    movements,
    statuses: new Map(entries.map((e) => [e.operation.operationId, e.status])),
    // Only movements still waiting for their job need the workers' records.
    blocks: movements.some((m) => m.state === 'Waiting') ? await blocksOf() : [],
    ...(input.moved ? { moved: input.moved } : {}),
    backup: run,
    store,
    ...(deps.snapshotter ? { snapshotter: deps.snapshotter } : {}),
    ...(deps.dataMover ? { dataMover: deps.dataMover } : {}),
    now,
    ...(signal ? { signal } : {}),
  });
  const copies = [...(progress.copies ?? [])];
  gatherCopies({ entries, targets: settings.copySnapshots, copies });
  await advanceCopies({
    copies,
    copier: deps.snapshotCopies,
    backupName: run.name,
    now,
    timeoutMs: settings.itemOperationTimeoutSeconds * 1000,
    signal,
  });
  progress = { ...progress, polls: progress.polls + 1, movements, ...(copies.length > 0 ? { copies } : {}) };
  await store.put(work.volumeOperations, JSON.stringify(progress), {
    contentType: 'application/json',
    ...(signal ? { signal } : {}),
  });
  return outcomeOf({ entries, copies, movements, moveJobs, now, pollSeconds: deps.pollSeconds ?? 10 });
}
