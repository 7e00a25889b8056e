/**
 * RecordBackupDeletion, the delete workflow's last step: the backup's DeleteBackupRequest,
 * Processed, with what was deleted and, as Velero's status.errors, why anything could not be
 * (a snapshot kept, a running backup, a step that failed, garbage collection that failed). Once
 * the backup is gone its name's generation moves on, so the name can be used again. Never
 * deletes anything itself.
 */

import type { DeleteBackupRequest } from '../../shared/contracts/api.js';
import { dataMoverProgress } from '../../shared/contracts/data-mover-job.js';
import { backupKeys, dataMoverWorkKeys } from '../../shared/domain/storage/keys.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { nextGeneration } from '../common/execution-names.js';
import { readJson } from '../common/stored-records.js';
import type { DeletionStepResult } from '../delete-backup/deletion-step.js';
import { newDeleteRequest } from '../delete-backup/deletion-step.js';
import { reasonOf } from '../record-backup-failure/record-backup-failure.js';

/** The workflow's state when it gets here: the step's result, or the failure it caught. */
export interface DeletionState {
  readonly deletion?: DeletionStepResult;
  readonly failure?: { readonly Error?: string; readonly Cause?: string };
  readonly gcFailure?: { readonly Error?: string; readonly Cause?: string };
}

/** RecordBackupDeletion's input: the backup, the attempt, and the workflow's state. */
export interface DeletionOutcome {
  readonly name: string;
  readonly attempt: number;
  readonly outcome: DeletionState;
}

export async function recordBackupDeletion(
  input: DeletionOutcome,
  deps: { readonly store: ObjectStore; readonly clock: Clock },
): Promise<DeleteBackupRequest> {
  const { store } = deps;
  const { outcome } = input;
  const key = backupKeys(input.name).deleteRequest;
  const request =
    (await readJson<DeleteBackupRequest>(store, key)) ??
    newDeleteRequest({ name: input.name, attempt: input.attempt, now: deps.clock.now() });
  const result = outcome.deletion;
  const gc = await gcReport(store, result);
  const errors = [
    ...(outcome.failure ? [reasonOf(outcome.failure.Error ?? 'Unknown', outcome.failure.Cause)] : []),
    ...(result?.found === false ? [`backup "${input.name}" not found`] : []),
    ...(result?.errors ?? []),
    ...(outcome.gcFailure
      ? [
          `repository garbage collection failed: ${reasonOf(outcome.gcFailure.Error ?? 'Unknown', outcome.gcFailure.Cause)}`,
        ]
      : []),
    ...(gc?.problems ?? []).map((p) => `repository garbage collection: ${p}`),
  ];
  const processed: DeleteBackupRequest = {
    ...request,
    status: {
      phase: 'Processed',
      ...(errors.length > 0 ? { errors } : {}),
      deleted: result?.deleted ?? false,
      snapshotsDeleted: result?.snapshotsDeleted ?? [],
      manifestsDeleted: result?.manifestsDeleted ?? [],
      objectsDeleted: result?.objectsDeleted ?? 0,
      ...(gc ? { gc } : {}),
    },
  };
  await store.put(key, JSON.stringify(processed), { contentType: 'application/json' });
  if (result?.deleted) await nextGeneration({ store, kind: 'backups', name: input.name });
  return processed;
}

/** The garbage collection's report, from the data mover job's progress document. */
async function gcReport(store: ObjectStore, result: DeletionStepResult | undefined) {
  if (!result?.gcJob) return undefined;
  const raw = await readJson<unknown>(store, dataMoverWorkKeys(result.gcJob.jobId).progress);
  const progress = dataMoverProgress.safeParse(raw);
  const report = progress.success ? progress.data.result : undefined;
  if (report?.kind !== 'gc') return undefined;
  const { kind: _, problemCount: __, ...gc } = report;
  return gc;
}
