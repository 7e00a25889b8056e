/**
 * The Task states of backup.asl.json under `lifeboat --local`, each resolved to the use case its
 * Lambda runs (the recipe states in recipe-handlers.ts), and the hook runner and data mover tasks
 * started as child processes from their RunTask requests. Each says which state runs through
 * `progress`. Never consumes the work queue: the ItemBlock workers do (backup-runtime.ts).
 */
import { collectItems } from '../../functions/collect-items/collect-items.js';
import { finalizeBackup } from '../../functions/finalize-backup/finalize-backup.js';
import { recordBackupFailure } from '../../functions/record-backup-failure/record-backup-failure.js';
import { validateBackup } from '../../functions/validate-backup/validate-backup.js';
import { volumeOperations } from '../../functions/volume-operations/volume-operations.js';
import { KubernetesCluster } from '../../shared/adapters/kubernetes-cluster.js';
import type { JsonValue } from '../../shared/adapters/local-state-machine.js';
import { backupRun, collectItemsInput, validateBackupInput } from '../../shared/contracts/backup-run.js';
import { volumeOperationsInput } from '../../shared/contracts/backup-volumes.js';
import { backupKeys } from '../../shared/domain/storage/keys.js';
import type { WorkQueue } from '../../shared/ports/work-queue.js';
import { kubeConfigOf, type LocalBackupRun } from './backup-options.js';
import { containerEnvironment, runHookRunnerProcess } from './hook-runner-process.js';
import { runLocalDataMoverTask } from './local-data-mover.js';
import { recipeHandlers } from './recipe-handlers.js';

type Handler = (input: JsonValue) => Promise<JsonValue>;

/** The run's shared parts, and the queue CollectItems and the recipe groups send ItemBlocks to. */
export interface BackupTaskContext extends LocalBackupRun {
  readonly queue: WorkQueue;
}

export function backupTaskHandlers(context: BackupTaskContext): Record<string, Handler> {
  const { options, store, clock, progress } = context;
  const runTask = hookRunnerTask(context);
  return {
    ValidateBackup: validateBackupHandler(context),
    CollectItems: collectItemsHandler(context),
    RunLongHookBlock: async (input) => {
      progress({ type: 'state', state: 'RunLongHookBlock' });
      return runTask(input);
    },
    ...recipeHandlers({
      cluster: options.cluster,
      store,
      queue: context.queue,
      callbacks: context.callbacks,
      clock,
      podExecFor: context.podExec,
      inlineHookLimitMs: (options.inlineHookLimitSeconds ?? 600) * 1000,
      runTask,
      onState: (state) => progress({ type: 'state', state }),
      ...(options.pageSize ? { pageSize: options.pageSize } : {}),
      ...(options.maxMessageBytes ? { maxMessageBytes: options.maxMessageBytes } : {}),
    }),
    VolumeOperations: volumeOperationsHandler(context),
    RunDataMover: async (input) => {
      progress({ type: 'state', state: 'RunDataMover' });
      return runLocalDataMoverTask(input, options.dataMover?.environment);
    },
    FinalizeBackup: async (input) => {
      progress({ type: 'state', state: 'FinalizeBackup' });
      const { run } = (input ?? {}) as { run?: unknown };
      return (await finalizeBackup({ run: backupRun.parse(run) }, { store, clock })) as unknown as JsonValue;
    },
    RecordBackupFailure: recordBackupFailureHandler(context),
  };
}

/**
 * ecs:runTask.sync: the same RunTask request Step Functions would send; its container override
 * drives the hook runner, run as a child process.
 */
function hookRunnerTask({ options, store }: BackupTaskContext): Handler {
  return async (input) => {
    await runHookRunnerProcess({
      environment: containerEnvironment(input),
      storeLocation: store.location,
      ...(options.hookRunner?.storeEnvironment
        ? { storeEnvironment: options.hookRunner.storeEnvironment }
        : {}),
      kubeconfig: kubeConfigOf(options).exportConfig(),
    });
    return { StopCode: 'EssentialContainerExited', LastStatus: 'STOPPED' };
  };
}

/** Validates and claims the name; from then on the claim is renewed while this process runs. */
function validateBackupHandler({ options, store, clock, progress, claim }: BackupTaskContext): Handler {
  return async (input) => {
    progress({ type: 'state', state: 'ValidateBackup' });
    const parsed = validateBackupInput.parse(input);
    const outcome = await validateBackup(
      { request: parsed.request, runId: parsed.runId },
      {
        store,
        clock,
        itemBlocksTimeoutSeconds: options.itemBlocksTimeoutSeconds ?? 3600,
        claimLeaseSeconds: claim.leaseSeconds,
        ...(options.cluster instanceof KubernetesCluster
          ? { clusterNamed: async () => options.cluster as KubernetesCluster }
          : {}),
      },
    );
    if (outcome.valid) claim.hold(backupKeys(outcome.run.name).claim, outcome.run.runId);
    return outcome as JsonValue;
  };
}

/** Lists the cluster into ItemBlocks for the workers, then waits for them to finish the last. */
function collectItemsHandler(context: BackupTaskContext): Handler {
  const { options, store, clock, callbacks, progress } = context;
  return async (input) => {
    progress({ type: 'state', state: 'CollectItems' });
    const payload = collectItemsInput.parse((input as { Payload?: unknown }).Payload);
    const done = callbacks.wait(payload.taskToken);
    // Observed at once: should collecting fail first, a later failure of the wait (a lost
    // ItemBlock) is no unhandled rejection; awaited below, it still fails this attempt.
    done.catch(() => undefined);
    const summary = await collectItems(payload, {
      cluster: options.cluster,
      store,
      queue: context.queue,
      callbacks,
      clock,
      ...(options.pageSize ? { pageSize: options.pageSize } : {}),
      ...(options.maxMessageBytes ? { maxMessageBytes: options.maxMessageBytes } : {}),
    });
    progress({ type: 'collected', blocks: summary.blocks, items: summary.items });
    return (await done) as JsonValue;
  };
}

function volumeOperationsHandler({
  options,
  store,
  clock,
  progress,
  volumeDeps,
}: BackupTaskContext): Handler {
  return async (input) => {
    progress({ type: 'state', state: 'VolumeOperations' });
    const { run, moved } = volumeOperationsInput.parse(input ?? {});
    const mover = options.dataMover;
    return (await volumeOperations(
      { run: backupRun.parse(run), ...(moved ? { moved } : {}) },
      {
        store,
        clock,
        ...volumeDeps,
        ...(mover
          ? {
              dataMover: {
                repository: mover.repository,
                ...(mover.region ? { region: mover.region } : {}),
              },
            }
          : {}),
        pollSeconds: options.volumePollSeconds ?? 1,
      },
    )) as unknown as JsonValue;
  };
}

function recordBackupFailureHandler({ store, clock, progress }: BackupTaskContext): Handler {
  return async (input) => {
    progress({ type: 'state', state: 'RecordBackupFailure' });
    const { run, failure } = (input ?? {}) as {
      run?: unknown;
      failure?: { Error?: string; Cause?: string };
    };
    return (await recordBackupFailure(
      { run: backupRun.parse(run), failure: failure ?? {} },
      { store, clock },
    )) as unknown as JsonValue;
  };
}
