/**
 * `lifeboat --local` for DR drills: executes statemachines/drill.asl.json in this process, each
 * Task resolved to the use case its Lambda runs, and its nested restore execution to the local
 * restore runtime (statemachines/restore.asl.json, as `restore create --local` runs it), against
 * the target cluster's kubeconfig and the backup location. The readiness loop waits in the
 * definition's Wait state, as in AWS. Never changes the definition it runs.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { checkDrillItems } from '../../functions/check-drill-items/check-drill-items.js';
import { checkDrillReadiness } from '../../functions/check-drill-readiness/check-drill-readiness.js';
import { clearDrillNamespaces } from '../../functions/clear-drill-namespaces/clear-drill-namespaces.js';
import { finishDrill } from '../../functions/finish-drill/finish-drill.js';
import { startDrill } from '../../functions/start-drill/start-drill.js';
import {
  ExecutionFailed,
  type JsonValue,
  runLocalStateMachine,
  substitute,
} from '../../shared/adapters/local-state-machine.js';
import { systemClock } from '../../shared/adapters/system-clock.js';
import { drillRestoreEnd, drillRun } from '../../shared/contracts/drill.js';
import type { Clock } from '../../shared/ports/clock.js';
import { type LocalRestoreOptions, runLocalRestore } from './restore-runtime.js';
import { runtimeFiles } from './runtime-files.js';

export const DRILL_DEFINITION = runtimeFiles.statemachine('drill');

export const LOCAL_DRILL_ARNS: Readonly<Record<string, string>> = {
  StartDrillFunctionArn: 'arn:aws:lambda:local:000000000000:function:StartDrill',
  RestoreStateMachineArn: 'arn:aws:states:local:000000000000:stateMachine:Restore',
  CheckDrillItemsFunctionArn: 'arn:aws:lambda:local:000000000000:function:CheckDrillItems',
  CheckDrillReadinessFunctionArn: 'arn:aws:lambda:local:000000000000:function:CheckDrillReadiness',
  FinishDrillFunctionArn: 'arn:aws:lambda:local:000000000000:function:FinishDrill',
  ClearDrillNamespacesFunctionArn: 'arn:aws:lambda:local:000000000000:function:ClearDrillNamespaces',
};

export interface LocalDrillOptions extends LocalRestoreOptions {
  readonly clock?: Clock;
  /** Seconds between two looks at the restored workloads (default 2: a laptop's cluster is quick). */
  readonly pollSeconds?: number;
}

type Handler = (input: JsonValue) => Promise<JsonValue>;

/** The nested restore as `startExecution.sync:2` answers: its output, or a failure whose cause is its end. */
function runRestoreHandler(options: LocalDrillOptions): Handler {
  return async (input) => {
    // The Task's parameters, as StartExecution takes them: the restore's input under `Input`.
    const { request } = (input as { Input: { request: unknown } }).Input;
    try {
      const output = await runLocalRestore(request, { ...options, executionName: `local-${randomUUID()}` });
      return { Status: 'SUCCEEDED', Output: output };
    } catch (error) {
      if (!(error instanceof ExecutionFailed)) throw error;
      const failed = new Error(JSON.stringify({ Error: error.failure.error, Cause: error.failure.cause }));
      failed.name = 'States.TaskFailed';
      throw failed;
    }
  };
}

export async function runLocalDrill(request: unknown, options: LocalDrillOptions): Promise<JsonValue> {
  const runId = options.executionName ?? `local-${randomUUID()}`;
  const definition = substitute(await readFile(DRILL_DEFINITION, 'utf8'), LOCAL_DRILL_ARNS);
  const clock = options.clock ?? systemClock;
  const { store, cluster } = options;
  const clusterNamed = async () => cluster;
  const runOf = (input: JsonValue) => drillRun.parse((input as { run: unknown }).run);
  const handlers: Record<string, Handler> = {
    StartDrill: async (input) =>
      (await startDrill(input as { request: unknown; runId: string }, {
        store,
        clock,
        pollSeconds: options.pollSeconds ?? 2,
      })) as unknown as JsonValue,
    ClearDrillNamespaces: async (input) =>
      (await clearDrillNamespaces(
        { run: runOf(input) },
        { store, clock, clusterNamed },
      )) as unknown as JsonValue,
    RunRestore: runRestoreHandler(options),
    CheckDrillItems: async (input) =>
      (await checkDrillItems({ run: runOf(input) }, { store, clusterNamed })) as unknown as JsonValue,
    CheckDrillReadiness: async (input) =>
      (await checkDrillReadiness(
        { run: runOf(input) },
        { store, clock, clusterNamed },
      )) as unknown as JsonValue,
    FinishDrill: async (input) =>
      (await finishDrill(
        { run: runOf(input), restore: drillRestoreEnd.parse((input as { restore: unknown }).restore) },
        { store, clock },
      )) as unknown as JsonValue,
  };
  return runLocalStateMachine({
    definition,
    input: { request: request as JsonValue },
    handlers,
    executionName: runId,
    taskToken: `token-${runId}`,
  });
}
