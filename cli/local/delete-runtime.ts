/**
 * The delete workflow under `lifeboat server --local`: executes statemachines/delete.asl.json in
 * this process, DeleteBackup and RecordBackupDeletion resolved to the use cases their Lambdas run
 * and CollectGarbage to the data mover's gc job as a child process, against a directory store.
 * Never changes the definition it runs.
 */
import { readFile } from 'node:fs/promises';
import { deleteBackupStep } from '../../functions/delete-backup/deletion-step.js';
import {
  type DeletionOutcome,
  recordBackupDeletion,
} from '../../functions/record-backup-deletion/record-backup-deletion.js';
import {
  type JsonValue,
  runLocalStateMachine,
  substitute,
} from '../../shared/adapters/local-state-machine.js';
import { systemClock } from '../../shared/adapters/system-clock.js';
import type { RepositoryLocation } from '../../shared/contracts/data-mover-job.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { Snapshotter } from '../../shared/ports/snapshotter.js';
import { LOCAL_DATA_MOVER_TASK, runLocalDataMoverTask } from './local-data-mover.js';
import { runtimeFiles } from './runtime-files.js';

export const LOCAL_DELETE_FUNCTION_ARNS: Readonly<Record<string, string>> = {
  DeleteBackupFunctionArn: 'arn:aws:lambda:local:000000000000:function:DeleteBackup',
  RecordBackupDeletionFunctionArn: 'arn:aws:lambda:local:000000000000:function:RecordBackupDeletion',
  ...LOCAL_DATA_MOVER_TASK,
};

export interface LocalDeleteOptions {
  readonly store: ObjectStore;
  readonly snapshotter?: Snapshotter;
  /** The data mover's repository in the store; unset, no garbage collection runs. */
  readonly repository?: RepositoryLocation;
  /** Added to the data mover process's environment. */
  readonly environment?: Readonly<Record<string, string>>;
  readonly executionName: string;
}

export async function runLocalDelete(
  input: { readonly name: string; readonly attempt: number },
  options: LocalDeleteOptions,
): Promise<JsonValue> {
  const { store } = options;
  const definition = substitute(
    await readFile(runtimeFiles.statemachine('delete'), 'utf8'),
    LOCAL_DELETE_FUNCTION_ARNS,
  );
  return runLocalStateMachine({
    definition,
    input: input as unknown as JsonValue,
    handlers: {
      DeleteBackup: async (step) =>
        (await deleteBackupStep(step as unknown as { name: string; attempt: number; runId: string }, {
          store,
          clock: systemClock,
          ...(options.snapshotter ? { snapshotter: options.snapshotter } : {}),
          ...(options.repository ? { repository: options.repository } : {}),
        })) as unknown as JsonValue,
      CollectGarbage: (task) => runLocalDataMoverTask(task, options.environment),
      RecordBackupDeletion: async (step) =>
        (await recordBackupDeletion(step as unknown as DeletionOutcome, {
          store,
          clock: systemClock,
        })) as unknown as JsonValue,
    },
    executionName: options.executionName,
    taskToken: `token-${options.executionName}`,
  });
}
