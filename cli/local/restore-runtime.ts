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
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pLimit from 'p-limit';
import { finalizeRestore } from '../../functions/finalize-restore/finalize-restore.js';
import { patchProvisionedVolumes } from '../../functions/patch-provisioned-volumes/patch-provisioned-volumes.js';
import { planRestore } from '../../functions/plan-restore/plan-restore.js';
import { restoreHooks } from '../../functions/restore-hooks/restore-hooks.js';
import { restorePhase } from '../../functions/restore-phase/restore-phase.js';
import { restoreVolumes } from '../../functions/restore-volumes/restore-volumes.js';
import { runRestoreRecipeHook } from '../../functions/run-restore-recipe-hook/run-restore-recipe-hook.js';
import { validateRestore } from '../../functions/validate-restore/validate-restore.js';
import { ambientEbsSnapshotter } from '../../shared/adapters/ebs-snapshotter.js';
import { KubernetesCluster } from '../../shared/adapters/kubernetes-cluster.js';
import { KubernetesPodExec } from '../../shared/adapters/kubernetes-pod-exec.js';
import {
  type ExecutionEvent,
  type JsonValue,
  runLocalStateMachine,
  substitute,
} from '../../shared/adapters/local-state-machine.js';
import { systemClock } from '../../shared/adapters/system-clock.js';
import { volumeOperationsInput } from '../../shared/contracts/backup-volumes.js';
import {
  type ChunkTotals,
  restoreChunk,
  restorePlan,
  restoreRecipeHookInput,
  restoreRun,
} from '../../shared/contracts/restore-run.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { Cluster, ClusterWriter } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { PodExec } from '../../shared/ports/pod-exec.js';
import type { Snapshotter } from '../../shared/ports/snapshotter.js';
import { containerEnvironment, LOCAL_HOOK_RUNNER_TASK, runHookRunnerProcess } from './hook-runner-process.js';
import { LOCAL_DATA_MOVER_TASK, type LocalDataMover, runLocalDataMoverTask } from './local-data-mover.js';

const here = dirname(fileURLToPath(import.meta.url));
export const RESTORE_DEFINITION = join(here, '..', '..', 'statemachines', 'restore.asl.json');

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
};

/** One RestorePhase invocation that returned, with when it ran (performance.now() milliseconds). */
export interface ChunkRestored {
  readonly groupResource: string;
  readonly chunk: number;
  readonly totals: ChunkTotals;
  readonly startedMs: number;
  readonly finishedMs: number;
}

export interface LocalRestoreOptions {
  readonly cluster: Cluster & ClusterWriter;
  readonly store: ObjectStore;
  readonly clock?: Clock;
  /**
   * EC2, for volumes re-created from native snapshots; unset, one on the ambient AWS
   * configuration is made when a restore first needs it.
   */
  readonly snapshotter?: Snapshotter;
  /**
   * How the volume steps spend their time, as in Lambda unless set: polling within one call
   * (`pollWithinMs`, 20 s; `pollIntervalMs`, 2 s) and how long a re-provisioned PVC may stay
   * unbound before its PV patch is given up (`bindTimeoutMs`, 10 min).
   */
  readonly volumeStep?: {
    readonly pollWithinMs?: number;
    readonly pollIntervalMs?: number;
    readonly bindTimeoutMs?: number;
  };
  /**
   * Item writes in flight at once over the whole restore, shared by the parallel RestorePhase
   * invocations (as one invocation had before chunks fanned out). Unset: each invocation writes
   * up to 16 at once, as in Lambda.
   */
  readonly concurrency?: number;
  /** Items per chunk written by PlanRestore (500 unless set); small values make many invocations. */
  readonly chunkSize?: number;
  /** Called once a phase's chunks are all restored, with the phase's totals. */
  readonly onPhase?: (phase: string, totals: ChunkTotals) => void;
  /** Called when a RestorePhase invocation returns. */
  readonly onChunk?: (restored: ChunkRestored) => void;
  /**
   * Runs restore exec hooks; unset, the cluster's own credentials are used when it is a
   * KubernetesCluster (otherwise hooks fail as not runnable).
   */
  readonly podExec?: PodExec;
  /**
   * How one RestoreHooks invocation spends its time, as in Lambda unless set: looking for
   * containers (`pollMs`, 60 s), at most (`maxRunMs`, 14 min) and the state machine's wait in
   * between (`waitSeconds`, 1 s locally).
   */
  readonly hookStep?: { readonly pollMs?: number; readonly maxRunMs?: number; readonly waitSeconds?: number };
  /** Called when a RestoreHooks invocation returns, with the pods still waiting. */
  readonly onHooks?: (progress: { pending: number; settled: number }) => void;
  /** Called with each event of the execution's history, as Step Functions records it. */
  readonly onExecutionEvent?: (event: ExecutionEvent) => void;
  /** A recipe hook step whose commands could run longer than this goes to the hook runner (600 s). */
  readonly inlineHookLimitSeconds?: number;
  /**
   * The hook runner's task, run as a child process: variables that reach a store other than a
   * directory (LIFEBOAT_BUCKET, AWS_*), and the kubeconfig (unset: the cluster's own).
   */
  readonly hookRunner?: {
    readonly storeEnvironment?: Record<string, string>;
    readonly kubeConfig?: KubernetesCluster['kubeConfig'];
  };
  /**
   * The data mover, run as a child process for each volume whose data is in its repository:
   * the repository, the default region of restored volumes and the process's variables (AWS
   * endpoint and credentials). Unset: such volumes are errors of the restore, saying so.
   */
  readonly dataMover?: LocalDataMover;
}

export async function runLocalRestore(request: unknown, options: LocalRestoreOptions): Promise<JsonValue> {
  const clock = options.clock ?? systemClock;
  const { store, cluster } = options;
  const runId = `local-${randomUUID()}`;
  const definition = substitute(await readFile(RESTORE_DEFINITION, 'utf8'), LOCAL_RESTORE_FUNCTION_ARNS);
  const runOf = (input: JsonValue) => restoreRun.parse((input as { run?: unknown }).run);
  const limit = options.concurrency ? pLimit(options.concurrency) : undefined;
  const podExec =
    options.podExec ??
    (cluster instanceof KubernetesCluster ? new KubernetesPodExec(cluster.kubeConfig) : undefined);
  // Chunks still to restore and totals so far, per phase index, for onPhase.
  const phases = new Map<number, { groupResource: string; remaining: number; totals: ChunkTotals }>();
  const handlers: Record<string, (input: JsonValue) => Promise<JsonValue>> = {
    ValidateRestore: async (input) => {
      const { request: req, runId: id } = input as { request: unknown; runId: string };
      // The request may name a resource-modifier ConfigMap in the target cluster.
      return (await validateRestore(
        { request: req, runId: id },
        { store, clock, clusterNamed: async () => cluster },
      )) as JsonValue;
    },
    PlanRestore: async (input) => {
      const plan = await planRestore(
        { run: runOf(input) },
        {
          store,
          cluster,
          inlineHookLimitMs: (options.inlineHookLimitSeconds ?? 600) * 1000,
          ...(options.chunkSize ? { chunkSize: options.chunkSize } : {}),
        },
      );
      phases.clear();
      const parsed = restorePlan.parse(plan);
      for (const p of [...parsed.phases, ...(parsed.recipe?.steps.flatMap((s) => s.phases) ?? [])])
        phases.set(p.index, {
          groupResource: p.groupResource,
          remaining: p.chunkIndexes.length,
          totals: { created: 0, updated: 0, skipped: 0, failed: 0 },
        });
      return plan as JsonValue;
    },
    RestoreVolumes: async (input) => {
      const { moved } = volumeOperationsInput.parse(input ?? {});
      const mover = options.dataMover;
      return (await restoreVolumes(
        { run: runOf(input), ...(moved ? { moved } : {}) },
        {
          store,
          clock,
          snapshotter: options.snapshotter ?? ambientEbsSnapshotter(),
          ...(mover
            ? {
                dataMover: {
                  repository: mover.repository,
                  ...(mover.region ? { region: mover.region } : {}),
                },
              }
            : {}),
          ...options.volumeStep,
        },
      )) as JsonValue;
    },
    RunRestoreDataMover: async (input) => runLocalDataMoverTask(input, options.dataMover?.environment),
    PatchProvisionedVolumes: async (input) => {
      const { moved } = volumeOperationsInput.parse(input ?? {});
      const mover = options.dataMover;
      return (await patchProvisionedVolumes(
        { run: runOf(input), ...(moved ? { moved } : {}) },
        {
          store,
          cluster,
          clock,
          // The data mover runs on this machine: it reaches local and hostPath PVs' directories.
          ...(mover
            ? { dataMover: { repository: mover.repository }, fileAccess: 'local-paths' as const }
            : {}),
          ...options.volumeStep,
        },
      )) as JsonValue;
    },
    RunFileRestoreDataMover: async (input) => runLocalDataMoverTask(input, options.dataMover?.environment),
    RestorePhase: async (input) => {
      const startedMs = performance.now();
      const chunk = restoreChunk.parse(input);
      const result = await restorePhase(chunk, { store, cluster, clock, ...(limit ? { limit } : {}) });
      const totals = {
        created: result.created,
        updated: result.updated,
        skipped: result.skipped,
        failed: result.failed,
      };
      options.onChunk?.({
        groupResource: chunk.phase.groupResource,
        chunk: chunk.chunk,
        totals,
        startedMs,
        finishedMs: performance.now(),
      });
      const phase = phases.get(chunk.phase.index);
      if (phase) {
        for (const key of ['created', 'updated', 'skipped', 'failed'] as const)
          phase.totals[key] += totals[key];
        phase.remaining--;
        if (phase.remaining === 0) options.onPhase?.(phase.groupResource, phase.totals);
      }
      return result as JsonValue;
    },
    RestoreHooks: async (input) => {
      const progress = await restoreHooks(
        { run: runOf(input) },
        {
          store,
          cluster,
          clock,
          ...(podExec ? { podExec } : {}),
          waitSeconds: 1,
          ...options.hookStep,
        },
      );
      options.onHooks?.({ pending: progress.pending, settled: progress.settled });
      return progress as JsonValue;
    },
    // The same task inside a recipe's group step (state names are unique in a state machine).
    RestoreRecipePhase: async (input) => handlers.RestorePhase?.(input) ?? null,
    RunRestoreRecipeHook: async (input) =>
      (await runRestoreRecipeHook(restoreRecipeHookInput.parse(input), {
        store,
        cluster,
        clock,
        ...(podExec ? { podExec } : {}),
        waitSeconds: 1,
        ...options.hookStep,
      })) as JsonValue,
    // ecs:runTask.sync: the RunTask request Step Functions would send drives the hook runner.
    RunLongRestoreRecipeHook: async (input) => {
      const kubeConfig =
        options.hookRunner?.kubeConfig ??
        (cluster instanceof KubernetesCluster ? cluster.kubeConfig : undefined);
      if (!kubeConfig)
        throw new LifeboatError('hooks need a Kubernetes cluster reached through a kubeconfig');
      await runHookRunnerProcess({
        environment: containerEnvironment(input),
        storeLocation: store.location,
        ...(options.hookRunner?.storeEnvironment
          ? { storeEnvironment: options.hookRunner.storeEnvironment }
          : {}),
        kubeconfig: kubeConfig.exportConfig(),
      });
      return { StopCode: 'EssentialContainerExited', LastStatus: 'STOPPED' };
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
    ...(options.onExecutionEvent ? { onEvent: options.onExecutionEvent } : {}),
  });
}
