/**
 * Deleting a backup through the API, with Velero's DeleteBackupRequest semantics: a backup still
 * running is not deleted (409); otherwise a request is recorded (phase New) and the delete
 * workflow started for it, answered 202 with the request, which the workflow takes to
 * InProgress and Processed (with the errors that kept anything). Asking again while a deletion
 * runs answers that deletion; asking again after one that failed starts the next attempt.
 */
import type { DeleteBackupRequest } from '../../shared/contracts/api.js';
import { backupKeys } from '../../shared/domain/storage/keys.js';
import { executionName, generationOf } from '../common/execution-names.js';
import { readJson } from '../common/stored-records.js';
import { newDeleteRequest } from '../delete-backup/deletion-step.js';
import { backupStatus, RUNNING_PHASES } from './backup-status.js';
import type { ApiDeps } from './deps.js';
import { type ApiResult, conflict, json, notFound } from './http.js';

export async function deleteBackup(
  name: string,
  deps: Pick<ApiDeps, 'store' | 'executions' | 'signal'>,
): Promise<ApiResult> {
  const { store } = deps;
  const status = await backupStatus(name, deps);
  const key = backupKeys(name).deleteRequest;
  const previous = await readJson<DeleteBackupRequest>(store, key);
  if (!status) return notFound(`backup "${name}"`);
  if (RUNNING_PHASES.has(status.status.phase))
    return conflict(
      'BackupInProgress',
      `backup "${name}" is still in progress (${status.status.phase}): it cannot be deleted yet`,
    );
  const generation = await generationOf({ store, kind: 'backups', name });
  const nameOf = (attempt: number) => executionName({ workflow: 'delete', name, generation, attempt });
  if (previous && previous.status.phase !== 'Processed') {
    const running = await deps.executions.describe({
      workflow: 'delete',
      name: nameOf(previous.metadata.generation),
    });
    if (!running || running.status === 'RUNNING') return json(202, previous);
  }
  const attempt = (previous?.metadata.generation ?? 0) + 1;
  const request = newDeleteRequest({ name, attempt, now: new Date() });
  await store.put(key, JSON.stringify(request), { contentType: 'application/json' });
  await deps.executions.start({
    workflow: 'delete',
    name: nameOf(attempt),
    input: JSON.stringify({ name, attempt }),
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  return json(202, request);
}

export async function getDeletion(name: string, deps: ApiDeps): Promise<ApiResult> {
  const request = await readJson<DeleteBackupRequest>(deps.store, backupKeys(name).deleteRequest);
  return request ? json(200, request) : notFound(`a deletion of backup "${name}"`);
}
