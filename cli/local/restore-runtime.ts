/**
 * `lifeboat --local` for restores: executes statemachines/restore.asl.json in this process,
 * each Task resolved to the same use case its Lambda runs, against a kubeconfig's cluster and a
 * backup location (directory or S3).
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { finalizeRestore } from '../../functions/finalize-restore/finalize-restore.js';
import { planRestore } from '../../functions/plan-restore/plan-restore.js';
import { restorePhase } from '../../functions/restore-phase/restore-phase.js';
import { validateRestore } from '../../functions/validate-restore/validate-restore.js';
import {
  type JsonValue,
  runLocalStateMachine,
  substitute,
} from '../../shared/adapters/local-state-machine.js';
import { systemClock } from '../../shared/adapters/system-clock.js';
import { restorePhase as restorePhaseSchema, restoreRun } from '../../shared/contracts/restore-run.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { Cluster, ClusterWriter } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';

const here = dirname(fileURLToPath(import.meta.url));
export const RESTORE_DEFINITION = join(here, '..', '..', 'statemachines', 'restore.asl.json');

export const LOCAL_RESTORE_FUNCTION_ARNS: Readonly<Record<string, string>> = {
  ValidateRestoreFunctionArn: 'arn:aws:lambda:local:000000000000:function:ValidateRestore',
  PlanRestoreFunctionArn: 'arn:aws:lambda:local:000000000000:function:PlanRestore',
  RestorePhaseFunctionArn: 'arn:aws:lambda:local:000000000000:function:RestorePhase',
  FinalizeRestoreFunctionArn: 'arn:aws:lambda:local:000000000000:function:FinalizeRestore',
};

export interface LocalRestoreOptions {
  readonly cluster: Cluster & ClusterWriter;
  readonly store: ObjectStore;
  readonly clock?: Clock;
  readonly concurrency?: number;
  readonly onPhase?: (
    phase: string,
    totals: { created: number; updated: number; skipped: number; failed: number },
  ) => void;
}

export async function runLocalRestore(request: unknown, options: LocalRestoreOptions): Promise<JsonValue> {
  const clock = options.clock ?? systemClock;
  const { store, cluster } = options;
  const runId = `local-${randomUUID()}`;
  const definition = substitute(await readFile(RESTORE_DEFINITION, 'utf8'), LOCAL_RESTORE_FUNCTION_ARNS);
  const runOf = (input: JsonValue) => restoreRun.parse((input as { run?: unknown }).run);
  const handlers: Record<string, (input: JsonValue) => Promise<JsonValue>> = {
    ValidateRestore: async (input) => {
      const { request: req, runId: id } = input as { request: unknown; runId: string };
      return (await validateRestore({ request: req, runId: id }, { store, clock })) as JsonValue;
    },
    PlanRestore: async (input) => (await planRestore({ run: runOf(input) }, { store, cluster })) as JsonValue,
    RestorePhase: async (input) => {
      const phase = restorePhaseSchema.parse((input as { phase?: unknown }).phase);
      const totals = await restorePhase(
        { run: runOf(input), phase },
        { store, cluster, clock, ...(options.concurrency ? { concurrency: options.concurrency } : {}) },
      );
      options.onPhase?.(phase.groupResource, totals);
      return totals as JsonValue;
    },
    FinalizeRestore: async (input) =>
      (await finalizeRestore({ run: runOf(input) }, { store, clock })) as unknown as JsonValue,
  };
  return runLocalStateMachine({
    definition,
    input: { request: request as JsonValue },
    handlers,
    executionName: runId,
    taskToken: `token-${runId}`,
  });
}
