/**
 * A backup as the API shows it, whatever stage it is at: the stored `velero-backup.json` once
 * written (phase Deleting while a deletion runs), otherwise what the running execution says:
 * New before it claimed the name, InProgress with live progress (items collected, and backed up
 * so far, from the ItemBlock results written) once it did, FailedValidation or Failed when it
 * ended without a document. Reads only.
 */
import { readBackupDocument } from '../../shared/adapters/stored-file-reader.js';
import type { DeleteBackupRequest } from '../../shared/contracts/api.js';
import type { NameClaim } from '../../shared/contracts/name-claim.js';
import {
  type BackupDocument,
  type BackupPhase,
  backupDocument,
  CLUSTER_ANNOTATION,
} from '../../shared/domain/storage/backup-document.js';
import { backupKeys, backupWorkKeys } from '../../shared/domain/storage/keys.js';
import type { Execution, Executions } from '../../shared/ports/executions.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { executionName, generationOf } from '../common/execution-names.js';
import { claimStanding, readClaim } from '../common/name-claim.js';
import { readJson } from '../common/stored-records.js';

export interface StatusDeps {
  readonly store: ObjectStore;
  readonly executions: Executions;
  readonly signal?: AbortSignal;
}

interface RequestedBackup {
  readonly cluster?: string;
  readonly backup?: {
    readonly metadata?: { readonly labels?: Record<string, string> };
    readonly spec?: Record<string, unknown>;
  };
}

/** The execution the API started for this backup name, if any. */
export async function backupExecution(name: string, deps: StatusDeps): Promise<Execution | undefined> {
  const generation = await generationOf({ store: deps.store, kind: 'backups', name });
  return deps.executions.describe({
    workflow: 'backup',
    name: executionName({ workflow: 'backup', name, generation }),
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
}

/** Velero's phases of a backup that has not ended. */
export const RUNNING_PHASES: ReadonlySet<string> = new Set(['New', 'InProgress', 'Finalizing']);

export async function backupStatus(name: string, deps: StatusDeps): Promise<BackupDocument | undefined> {
  const { store } = deps;
  const keys = backupKeys(name);
  const stored = await readBackupDocument(store, name);
  if (stored) {
    const deletion = await readJson<DeleteBackupRequest>(store, keys.deleteRequest);
    const deleting = deletion !== undefined && deletion.status.phase !== 'Processed';
    return deleting ? { ...stored, status: { ...stored.status, phase: 'Deleting' } } : stored;
  }
  const execution = await backupExecution(name, deps);
  const requested = execution ? requestOf(execution.input) : undefined;
  if (execution && execution.status !== 'RUNNING' && execution.status !== 'SUCCEEDED')
    return ended({ name, execution, requested });
  const claim = await readClaim(store, keys.claim);
  if (claim && !(await store.exists(keys.deletion))) {
    // A run that stopped renewing its claim died: Failed, as the next local look records it.
    const standing = claimStanding(claim, new Date());
    if (!standing.live)
      return synthesized({
        name,
        requested,
        phase: 'Failed',
        startedAt: new Date(claim.startedAt),
        failureReason: standing.reason,
      });
    return running({ name, claim, deps });
  }
  if (execution?.status === 'RUNNING')
    return synthesized({ name, requested, phase: 'New', startedAt: execution.startDate });
  return undefined;
}

function requestOf(input: string): RequestedBackup | undefined {
  try {
    return (JSON.parse(input) as { request?: RequestedBackup }).request;
  } catch {
    return undefined;
  }
}

function synthesized(options: {
  name: string;
  requested: RequestedBackup | undefined;
  phase: BackupPhase;
  startedAt: Date;
  completedAt?: Date;
  totalItems?: number;
  itemsBackedUp?: number;
  failureReason?: string;
  validationErrors?: readonly string[];
}): BackupDocument {
  const { requested } = options;
  const labels = requested?.backup?.metadata?.labels;
  return backupDocument({
    name: options.name,
    ...(labels ? { labels } : {}),
    ...(requested?.cluster ? { annotations: { [CLUSTER_ANNOTATION]: requested.cluster } } : {}),
    spec: requested?.backup?.spec ?? {},
    startedAt: options.startedAt,
    ...(options.completedAt ? { completedAt: options.completedAt } : {}),
    expiration: options.startedAt,
    phase: options.phase,
    ...(options.totalItems !== undefined
      ? { totalItems: options.totalItems, itemsBackedUp: options.itemsBackedUp ?? 0 }
      : {}),
    ...(options.failureReason ? { failureReason: options.failureReason } : {}),
    ...(options.validationErrors ? { validationErrors: options.validationErrors } : {}),
  });
}

/** An execution that ended with no document written: it failed validation, or failed early. */
function ended(options: {
  name: string;
  execution: Execution;
  requested: RequestedBackup | undefined;
}): BackupDocument {
  const { execution } = options;
  const base = {
    name: options.name,
    requested: options.requested,
    startedAt: execution.startDate,
    ...(execution.stopDate ? { completedAt: execution.stopDate } : {}),
  };
  if (execution.error === 'FailedValidation')
    return synthesized({
      ...base,
      phase: 'FailedValidation',
      validationErrors: (execution.cause ?? '').split('\n').filter(Boolean),
    });
  const reason = execution.error
    ? `${execution.error}: ${execution.cause ?? ''}`
    : `execution ${execution.status}`;
  return synthesized({ ...base, phase: 'Failed', failureReason: reason });
}

/** A run that claimed the name: InProgress, with the items collected and backed up so far. */
async function running(options: {
  name: string;
  claim: NameClaim;
  deps: StatusDeps;
}): Promise<BackupDocument> {
  const { name, claim, deps } = options;
  const work = backupWorkKeys({ name, runId: claim.runId });
  const requested = await readJson<RequestedBackup>(deps.store, work.request);
  const collected = await readJson<{ messages: number; items: number }>(deps.store, work.collected);
  let itemsBackedUp = 0;
  if (collected && collected.messages > 0) {
    // Messages carry about as many items each: the share of results written is the share done.
    const done = (await deps.store.list(work.resultsDir)).length;
    itemsBackedUp = Math.min(collected.items, Math.round((collected.items * done) / collected.messages));
  }
  return synthesized({
    name,
    requested,
    phase: 'InProgress',
    startedAt: new Date(claim.startedAt),
    ...(collected ? { totalItems: collected.items, itemsBackedUp } : {}),
  });
}
