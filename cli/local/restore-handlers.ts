/**
 * The Task states of restore.asl.json under `lifeboat --local`, each resolved to the use case its
 * Lambda runs; the hook runner and the data mover started as child processes from their RunTask
 * requests. RestorePhase also reports each chunk, and each phase once its chunks are all restored
 * (onChunk, onPhase). Never changes what a use case returns to the state machine.
 */
import pLimit, { type LimitFunction } from 'p-limit';
import { finalizeRestore } from '../../functions/finalize-restore/finalize-restore.js';
import { patchProvisionedVolumes } from '../../functions/patch-provisioned-volumes/patch-provisioned-volumes.js';
import { planRestore } from '../../functions/plan-restore/plan-restore.js';
import { recordRestoreFailure } from '../../functions/record-restore-failure/record-restore-failure.js';
import { restoreHooks } from '../../functions/restore-hooks/restore-hooks.js';
import { restorePhase } from '../../functions/restore-phase/restore-phase.js';
import { restoreVolumes } from '../../functions/restore-volumes/restore-volumes.js';
import { runRestoreRecipeHook } from '../../functions/run-restore-recipe-hook/run-restore-recipe-hook.js';
import { validateRestore } from '../../functions/validate-restore/validate-restore.js';
import { ambientEbsSnapshotter } from '../../shared/adapters/ebs-snapshotter.js';
import { ebsSnapshotterAt } from '../../shared/adapters/ebs-volume-places.js';
import { KubernetesCluster } from '../../shared/adapters/kubernetes-cluster.js';
import { KubernetesPodExec } from '../../shared/adapters/kubernetes-pod-exec.js';
import type { JsonValue } from '../../shared/adapters/local-state-machine.js';
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
import { restoreKeys } from '../../shared/domain/storage/keys.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { Cluster, ClusterWriter } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { PodExec } from '../../shared/ports/pod-exec.js';
import { containerEnvironment, runHookRunnerProcess } from './hook-runner-process.js';
import { runLocalDataMoverTask } from './local-data-mover.js';
import type { LocalRestoreOptions } from './restore-options.js';
import type { RunClaim } from './run-claim.js';

type Handler = (input: JsonValue) => Promise<JsonValue>;

/** A phase's chunks still to restore and its totals so far, for onPhase. */
interface PhaseProgress {
  readonly groupResource: string;
  remaining: number;
  readonly totals: ChunkTotals;
}

/** What the handlers of one local restore share. */
interface RestoreTaskContext {
  readonly options: LocalRestoreOptions;
  readonly store: ObjectStore;
  readonly cluster: Cluster & ClusterWriter;
  readonly clock: Clock;
  /** Item writes in flight over the whole restore (options.concurrency); unset: per invocation. */
  readonly limit: LimitFunction | undefined;
  readonly podExec: PodExec | undefined;
  /** Per phase index, set by PlanRestore. */
  readonly phases: Map<number, PhaseProgress>;
}

const runOf = (input: JsonValue) => restoreRun.parse((input as { run?: unknown }).run);

export function restoreTaskHandlers(
  options: LocalRestoreOptions,
  /** The run's claim on its name, held (renewed) once ValidateRestore has made it. */
  claim?: RunClaim,
): Record<string, Handler> {
  const { store, cluster } = options;
  const context: RestoreTaskContext = {
    options,
    store,
    cluster,
    clock: options.clock ?? systemClock,
    limit: options.concurrency ? pLimit(options.concurrency) : undefined,
    podExec:
      options.podExec ??
      (cluster instanceof KubernetesCluster ? new KubernetesPodExec(cluster.kubeConfig) : undefined),
    phases: new Map(),
  };
  const handlers: Record<string, Handler> = {
    ValidateRestore: validateRestoreHandler(context, claim),
    PlanRestore: planRestoreHandler(context),
    RestoreVolumes: restoreVolumesHandler(context),
    RunRestoreDataMover: async (input) => runLocalDataMoverTask(input, options.dataMover?.environment),
    PatchProvisionedVolumes: patchProvisionedVolumesHandler(context),
    RunFileRestoreDataMover: async (input) => runLocalDataMoverTask(input, options.dataMover?.environment),
    RestorePhase: restorePhaseHandler(context),
    RestoreHooks: restoreHooksHandler(context),
    // The same task inside a recipe's group step (state names are unique in a state machine),
    // and each one's last attempt once its retries are spent.
    RestoreRecipePhase: async (input) => handlers.RestorePhase?.(input) ?? null,
    RestorePhaseLastAttempt: async (input) => handlers.RestorePhase?.(input) ?? null,
    RestoreRecipePhaseLastAttempt: async (input) => handlers.RestorePhase?.(input) ?? null,
    RunRestoreRecipeHook: runRestoreRecipeHookHandler(context),
    // ecs:runTask.sync: the RunTask request Step Functions would send drives the hook runner.
    RunLongRestoreRecipeHook: hookRunnerTask(context),
    FinalizeRestore: async (input) =>
      (await finalizeRestore({ run: runOf(input) }, { store, clock: context.clock })) as unknown as JsonValue,
    RecordRestoreFailure: async (input) => {
      const { failure } = input as { failure?: { Error?: string; Cause?: string } };
      return (await recordRestoreFailure(
        { run: runOf(input), failure: failure ?? {} },
        { store, clock: context.clock },
      )) as unknown as JsonValue;
    },
  };
  return handlers;
}

/** Validates the request and claims the name, then holds (renews) the claim while the run lives. */
function validateRestoreHandler({ store, cluster, clock }: RestoreTaskContext, claim?: RunClaim): Handler {
  return async (input) => {
    const { request, runId } = input as { request: unknown; runId: string };
    // The request may name a resource-modifier ConfigMap in the target cluster.
    const outcome = await validateRestore(
      { request, runId },
      {
        store,
        clock,
        clusterNamed: async () => cluster,
        ...(claim ? { claimLeaseSeconds: claim.leaseSeconds } : {}),
      },
    );
    if (outcome.valid && !outcome.run.dryRun)
      claim?.hold(restoreKeys(outcome.run.name).claim, outcome.run.runId);
    return outcome as JsonValue;
  };
}

/** Plans the restore, and starts counting each phase's chunks for onPhase. */
function planRestoreHandler({ options, store, cluster, phases }: RestoreTaskContext): Handler {
  return async (input) => {
    const plan = await planRestore(
      { run: runOf(input) },
      {
        store,
        cluster,
        inlineHookLimitMs: (options.inlineHookLimitSeconds ?? 600) * 1000,
        ...(options.chunkSize ? { chunkSize: options.chunkSize } : {}),
        ...(options.volumeHome ? { volumeHome: options.volumeHome } : {}),
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
  };
}

function restoreVolumesHandler({ options, store, clock }: RestoreTaskContext): Handler {
  return async (input) => {
    const { moved } = volumeOperationsInput.parse(input ?? {});
    const mover = options.dataMover;
    return (await restoreVolumes(
      { run: runOf(input), ...(moved ? { moved } : {}) },
      {
        store,
        clock,
        snapshotter: options.snapshotter ?? ambientEbsSnapshotter(),
        snapshotterAt: options.snapshotterAt ?? ebsSnapshotterAt(),
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
  };
}

function patchProvisionedVolumesHandler({ options, store, cluster, clock }: RestoreTaskContext): Handler {
  return async (input) => {
    const { moved } = volumeOperationsInput.parse(input ?? {});
    const mover = options.dataMover;
    return (await patchProvisionedVolumes(
      { run: runOf(input), ...(moved ? { moved } : {}) },
      {
        store,
        cluster,
        clock,
        // The data mover runs on this machine: it reaches local and hostPath PVs' directories.
        ...(mover ? { dataMover: { repository: mover.repository }, fileAccess: 'local-paths' as const } : {}),
        ...options.volumeStep,
      },
    )) as JsonValue;
  };
}

/** Restores one chunk; reports it, and its phase once that phase's last chunk is restored. */
function restorePhaseHandler({ options, store, cluster, clock, limit, phases }: RestoreTaskContext): Handler {
  return async (input) => {
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
  };
}

function restoreHooksHandler({ options, store, cluster, clock, podExec }: RestoreTaskContext): Handler {
  return async (input) => {
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
  };
}

function runRestoreRecipeHookHandler({
  options,
  store,
  cluster,
  clock,
  podExec,
}: RestoreTaskContext): Handler {
  return async (input) =>
    (await runRestoreRecipeHook(restoreRecipeHookInput.parse(input), {
      store,
      cluster,
      clock,
      ...(podExec ? { podExec } : {}),
      waitSeconds: 1,
      ...options.hookStep,
    })) as JsonValue;
}

/** A recipe hook step longer than a Lambda: the hook runner, as a child process. */
function hookRunnerTask({ options, store, cluster }: RestoreTaskContext): Handler {
  return async (input) => {
    const kubeConfig =
      options.hookRunner?.kubeConfig ??
      (cluster instanceof KubernetesCluster ? cluster.kubeConfig : undefined);
    if (!kubeConfig) throw new LifeboatError('hooks need a Kubernetes cluster reached through a kubeconfig');
    await runHookRunnerProcess({
      environment: containerEnvironment(input),
      storeLocation: store.location,
      ...(options.hookRunner?.storeEnvironment
        ? { storeEnvironment: options.hookRunner.storeEnvironment }
        : {}),
      kubeconfig: kubeConfig.exportConfig(),
    });
    return { StopCode: 'EssentialContainerExited', LastStatus: 'STOPPED' };
  };
}
