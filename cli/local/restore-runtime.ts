/**
 * `lifeboat --local` for restores: executes statemachines/restore.asl.json in this process,
 * each Task resolved to the same use case its Lambda runs, against a kubeconfig's cluster and a
 * backup location (directory or S3). The chunks of a phase fan out as in AWS: the same inner Map
 * runs several RestorePhase invocations at once, and RestoreHooks loops through its Wait state
 * while exec hooks wait for their containers; a recipe's hook steps (RunRestoreRecipeHook) loop
 * the same way while they wait for their pods; a hook step longer than a Lambda runs in the hook
 * runner, started as a child process from its RunTask request as for backups, and so does the data
 * mover for volumes restored from its repository. Never changes the definition it runs.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import {
  type JsonValue,
  runLocalStateMachine,
  substitute,
} from '../../shared/adapters/local-state-machine.js';
import { systemClock } from '../../shared/adapters/system-clock.js';
import { LOCAL_HOOK_RUNNER_TASK } from './hook-runner-process.js';
import { LOCAL_DATA_MOVER_TASK } from './local-data-mover.js';
import { restoreTaskHandlers } from './restore-handlers.js';
import type { LocalRestoreOptions } from './restore-options.js';
import { LOCAL_CLAIM_LEASE_SECONDS, RunClaim } from './run-claim.js';
import { runtimeFiles } from './runtime-files.js';

export type { ChunkRestored, LocalRestoreOptions } from './restore-options.js';

export const RESTORE_DEFINITION = runtimeFiles.statemachine('restore');

export const LOCAL_RESTORE_FUNCTION_ARNS: Readonly<Record<string, string>> = {
  ValidateRestoreFunctionArn: 'arn:aws:lambda:local:000000000000:function:ValidateRestore',
  PlanRestoreFunctionArn: 'arn:aws:lambda:local:000000000000:function:PlanRestore',
  RestoreVolumesFunctionArn: 'arn:aws:lambda:local:000000000000:function:RestoreVolumes',
  PatchProvisionedVolumesFunctionArn: 'arn:aws:lambda:local:000000000000:function:PatchProvisionedVolumes',
  RestorePhaseFunctionArn: 'arn:aws:lambda:local:000000000000:function:RestorePhase',
  RestoreHooksFunctionArn: 'arn:aws:lambda:local:000000000000:function:RestoreHooks',
  RunRestoreRecipeHookFunctionArn: 'arn:aws:lambda:local:000000000000:function:RunRestoreRecipeHook',
  ...LOCAL_HOOK_RUNNER_TASK,
  ...LOCAL_DATA_MOVER_TASK,
  FinalizeRestoreFunctionArn: 'arn:aws:lambda:local:000000000000:function:FinalizeRestore',
  RecordRestoreFailureFunctionArn: 'arn:aws:lambda:local:000000000000:function:RecordRestoreFailure',
};

export async function runLocalRestore(request: unknown, options: LocalRestoreOptions): Promise<JsonValue> {
  const runId = options.executionName ?? `local-${randomUUID()}`;
  const definition = substitute(await readFile(RESTORE_DEFINITION, 'utf8'), LOCAL_RESTORE_FUNCTION_ARNS);
  const claim = new RunClaim({
    store: options.store,
    clock: options.clock ?? systemClock,
    leaseSeconds: options.claimLeaseSeconds ?? LOCAL_CLAIM_LEASE_SECONDS,
  });
  try {
    return await runLocalStateMachine({
      definition,
      input: { request: request as JsonValue },
      handlers: restoreTaskHandlers(options, claim),
      executionName: runId,
      taskToken: `token-${runId}`,
      ...(options.onExecutionEvent ? { onEvent: options.onExecutionEvent } : {}),
    });
  } finally {
    await claim.release();
  }
}
