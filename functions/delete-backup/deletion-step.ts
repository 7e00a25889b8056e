/**
 * The DeleteBackup step of the delete workflow (statemachines/delete.asl.json): marks the
 * backup's DeleteBackupRequest InProgress, then deletes what `lifeboat backup delete` deletes
 * (delete-backup.ts) but the repository's garbage collection, which the workflow runs next as
 * the data mover's `gc` job: this step names that job when the backup is gone and the store has
 * a repository. Re-runnable, as deleteBackup is.
 */
import type { DeleteBackupRequest } from '../../shared/contracts/api.js';
import type { RepositoryLocation } from '../../shared/contracts/data-mover-job.js';
import { backupKeys, repositoryKeys } from '../../shared/domain/storage/keys.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { Snapshotter } from '../../shared/ports/snapshotter.js';
import { readJson } from '../common/stored-records.js';
import { type DeleteBackupResult, deleteBackup } from './delete-backup.js';

export interface DeletionInput {
  readonly name: string;
  readonly attempt: number;
  /** The execution's name: the garbage collection job's id is made of it. */
  readonly runId: string;
}

export interface DeletionStepResult extends DeleteBackupResult {
  /** The data mover's `gc` job to run next, when the backup is gone and a repository exists. */
  readonly gcJob?: { readonly kind: 'gc'; readonly jobId: string; readonly repository: RepositoryLocation };
}

export async function deleteBackupStep(
  input: DeletionInput,
  deps: {
    readonly store: ObjectStore;
    readonly clock: Clock;
    readonly snapshotter?: Snapshotter;
    /** The data mover's repository in this store; unset, no garbage collection follows. */
    readonly repository?: RepositoryLocation;
    readonly signal?: AbortSignal;
  },
): Promise<DeletionStepResult> {
  const { store } = deps;
  await markInProgress({ store, name: input.name, attempt: input.attempt, clock: deps.clock });
  const result = await deleteBackup(
    { name: input.name },
    {
      store,
      ...(deps.snapshotter ? { snapshotter: deps.snapshotter } : {}),
      ...(deps.signal ? { signal: deps.signal } : {}),
    },
  );
  const collect = result.deleted && deps.repository && (await store.exists(repositoryKeys.format));
  return {
    ...result,
    ...(collect && deps.repository
      ? { gcJob: { kind: 'gc', jobId: `gc-${input.runId}`, repository: deps.repository } }
      : {}),
  };
}

/** The request as the API wrote it (New), now InProgress; written anew when there is none. */
async function markInProgress(options: {
  store: ObjectStore;
  name: string;
  attempt: number;
  clock: Clock;
}): Promise<void> {
  const key = backupKeys(options.name).deleteRequest;
  const existing = await readJson<DeleteBackupRequest>(options.store, key);
  const request =
    existing ?? newDeleteRequest({ name: options.name, attempt: options.attempt, now: options.clock.now() });
  await options.store.put(key, JSON.stringify({ ...request, status: { phase: 'InProgress' } }), {
    contentType: 'application/json',
  });
}

/** Velero's DeleteBackupRequest for a backup, phase New. */
export function newDeleteRequest(options: { name: string; attempt: number; now: Date }): DeleteBackupRequest {
  return {
    apiVersion: 'velero.io/v1',
    kind: 'DeleteBackupRequest',
    metadata: {
      name: `${options.name}-${options.attempt}`,
      namespace: 'velero',
      generation: options.attempt,
      creationTimestamp: `${options.now.toISOString().slice(0, 19)}Z`,
    },
    spec: { backupName: options.name },
    status: { phase: 'New' },
  };
}
