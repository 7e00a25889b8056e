/**
 * PublishOutcome: once an execution of a workflow has ended (whatever ended it: success, a
 * failure the workflow recorded, a failed validation, a timeout, an abort), the event that says
 * so: `Backup Completed|PartiallyFailed|Failed|FailedValidation`, `Restore …`, `Deletion
 * Completed|Failed`, with the Velero object's status as its detail, read from the store where the
 * workflow recorded it. Also the run's figures for metrics (items, bytes, seconds, errors).
 * Reads the store; writes only the event.
 */
import { readBackupDocument } from '../../shared/adapters/stored-file-reader.js';
import type { DeleteBackupRequest } from '../../shared/contracts/api.js';
import { StoredFileUnreadable } from '../../shared/domain/errors.js';
import { CLUSTER_ANNOTATION } from '../../shared/domain/storage/backup-document.js';
import { backupKeys } from '../../shared/domain/storage/keys.js';
import type { EventBus, LifeboatEvent } from '../../shared/ports/event-bus.js';
import type { ExecutionStatus, Workflow } from '../../shared/ports/executions.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { RunMetrics } from '../../shared/runtime/metrics.js';
import { readJson, readRestoreRecord } from '../common/stored-records.js';
import { drillOutcome } from './drill-outcome.js';

export interface EndedExecution {
  readonly workflow: Workflow;
  readonly executionName: string;
  readonly status: ExecutionStatus;
  /** The execution's input, as JSON text. */
  readonly input: string;
  readonly error?: string;
  readonly cause?: string;
  readonly startDate?: Date;
  readonly stopDate?: Date;
}

/** What a run did, for metrics: the figures the metrics publish, of one of the workflows. */
export type RunFigures = RunMetrics & { readonly workflow: Workflow };

interface Requested {
  readonly cluster?: string;
  readonly backup?: { readonly metadata?: { readonly name?: string } };
  readonly restore?: { readonly metadata?: { readonly name?: string } };
}

function parsedInput(input: string): { request?: Requested; name?: string } {
  try {
    return JSON.parse(input) as { request?: Requested; name?: string };
  } catch {
    return {};
  }
}

const seconds = (from?: string, to?: string): number | undefined =>
  from && to ? Math.max(0, (Date.parse(to) - Date.parse(from)) / 1000) : undefined;

/** A record that cannot be read (refused by the bounded reader) is reported as no record. */
function unreadable(error: unknown): undefined {
  if (error instanceof StoredFileUnreadable) return undefined;
  throw error;
}

/** A run that ended without its record: the phase its execution's end says. */
function unrecorded(ended: EndedExecution): { phase: string; reason: string } {
  if (ended.error === 'FailedValidation') return { phase: 'FailedValidation', reason: ended.cause ?? '' };
  return {
    phase: 'Failed',
    reason: `${ended.error ?? ended.status}${ended.cause ? `: ${ended.cause}` : ''}`,
  };
}

async function backupOutcome(ended: EndedExecution, store: ObjectStore) {
  const { request } = parsedInput(ended.input);
  const name = request?.backup?.metadata?.name ?? '';
  // A failed validation may be of a name another backup holds: that one's document is not this run's.
  const document =
    ended.error === 'FailedValidation' ? undefined : await readBackupDocument(store, name).catch(unreadable);
  const cluster = document?.metadata.annotations?.[CLUSTER_ANNOTATION] ?? request?.cluster;
  if (!document) {
    const { phase, reason } = unrecorded(ended);
    return {
      type: `Backup ${phase}`,
      detail: { backup: name, cluster, phase, status: { phase, failureReason: reason } },
      figures: { workflow: ended.workflow, phase, items: 0, errors: 1, warnings: 0 },
    };
  }
  const s = document.status;
  const bytes = await store.size?.(backupKeys(name).contents);
  return {
    type: `Backup ${s.phase}`,
    detail: { backup: name, cluster, phase: s.phase, status: s },
    figures: {
      workflow: ended.workflow,
      phase: s.phase,
      items: s.progress?.itemsBackedUp ?? 0,
      errors: s.errors ?? 0,
      warnings: s.warnings ?? 0,
      ...(bytes !== undefined ? { bytes } : {}),
      ...(seconds(s.startTimestamp, s.completionTimestamp) !== undefined
        ? { seconds: seconds(s.startTimestamp, s.completionTimestamp) }
        : {}),
    },
  };
}

async function restoreOutcome(ended: EndedExecution, store: ObjectStore) {
  const { request } = parsedInput(ended.input);
  const name = request?.restore?.metadata?.name ?? '';
  const document =
    ended.error === 'FailedValidation' ? undefined : await readRestoreRecord(store, name).catch(unreadable);
  const { phase, reason } = document?.status.phase
    ? { phase: document.status.phase, reason: '' }
    : unrecorded(ended);
  const s = document?.status ?? { phase, failureReason: reason };
  const took = seconds(document?.status.startTimestamp, document?.status.completionTimestamp);
  return {
    type: `Restore ${phase}`,
    detail: { restore: name, backup: document?.spec.backupName, cluster: request?.cluster, phase, status: s },
    figures: {
      workflow: ended.workflow,
      phase,
      items: document?.status.progress?.itemsRestored ?? 0,
      errors: document?.status.errors ?? (document ? 0 : 1),
      warnings: document?.status.warnings ?? 0,
      ...(took !== undefined ? { seconds: took } : {}),
    },
  };
}

async function deletionOutcome(ended: EndedExecution, store: ObjectStore) {
  const name = parsedInput(ended.input).name ?? '';
  const request = await readJson<DeleteBackupRequest>(store, backupKeys(name).deleteRequest);
  const deleted = ended.status === 'SUCCEEDED' && request?.status.deleted === true;
  const phase = deleted ? 'Completed' : 'Failed';
  const errors = request?.status.errors ?? (deleted ? [] : [unrecorded(ended).reason]);
  return {
    type: `Deletion ${phase}`,
    detail: { backup: name, phase, status: { ...(request?.status ?? { phase: 'Processed' }), errors } },
    figures: {
      workflow: ended.workflow,
      phase,
      items: request?.status.objectsDeleted ?? 0,
      errors: errors.length,
      warnings: 0,
    },
  };
}

export async function publishOutcome(
  ended: EndedExecution,
  deps: { readonly store: ObjectStore; readonly bus: EventBus; readonly clock: { now(): Date } },
): Promise<{ event: LifeboatEvent; figures: RunFigures }> {
  const outcome =
    ended.workflow === 'backup'
      ? await backupOutcome(ended, deps.store)
      : ended.workflow === 'restore'
        ? await restoreOutcome(ended, deps.store)
        : ended.workflow === 'drill'
          ? await drillOutcome(ended, deps.store)
          : await deletionOutcome(ended, deps.store);
  const event: LifeboatEvent = {
    detailType: outcome.type,
    detail: { ...outcome.detail, execution: ended.executionName },
    time: deps.clock.now(),
  };
  await deps.bus.publish(event);
  return { event, figures: outcome.figures };
}
