/**
 * `lifeboat --local` for backups: executes statemachines/backup.asl.json in this process,
 * each Task resolved to the same use case its Lambda runs, the queue and its workers in memory,
 * the backup written to a directory (or any object store). Output a person can follow comes
 * through `onProgress`.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { backupItemBlocks, recordDeadLetter } from '../../functions/backup-item-block/backup-item-block.js';
import { collectItems } from '../../functions/collect-items/collect-items.js';
import { finalizeBackup } from '../../functions/finalize-backup/finalize-backup.js';
import { recordBackupFailure } from '../../functions/record-backup-failure/record-backup-failure.js';
import { validateBackup } from '../../functions/validate-backup/validate-backup.js';
import { volumeOperations } from '../../functions/volume-operations/volume-operations.js';
import { KubernetesCluster } from '../../shared/adapters/kubernetes-cluster.js';
import { KubernetesCsiSnapshots } from '../../shared/adapters/kubernetes-csi-snapshots.js';
import { KubernetesPodExec } from '../../shared/adapters/kubernetes-pod-exec.js';
import { LocalDirectoryStore } from '../../shared/adapters/local-directory-store.js';
import {
  type ExecutionEvent,
  type JsonValue,
  runLocalStateMachine,
  substitute,
} from '../../shared/adapters/local-state-machine.js';
import { LocalTaskCallbacks } from '../../shared/adapters/local-task-callbacks.js';
import { MemoryWorkQueue } from '../../shared/adapters/memory-work-queue.js';
import { systemClock } from '../../shared/adapters/system-clock.js';
import { backupRun, collectItemsInput, validateBackupInput } from '../../shared/contracts/backup-run.js';
import { volumeOperationsInput } from '../../shared/contracts/backup-volumes.js';
import { parseItemBlockMessage, safeParseItemBlockHeader } from '../../shared/contracts/item-block-wire.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { Cluster } from '../../shared/ports/cluster.js';
import type { CsiSnapshots } from '../../shared/ports/csi-snapshots.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { PodExec } from '../../shared/ports/pod-exec.js';
import type { Snapshotter } from '../../shared/ports/snapshotter.js';
import { containerEnvironment, LOCAL_HOOK_RUNNER_TASK, runHookRunnerProcess } from './hook-runner-process.js';
import type { ThreadSettings } from './item-block-thread-protocol.js';
import { defaultItemBlockThreads, ItemBlockThreads } from './item-block-threads.js';
import { LOCAL_DATA_MOVER_TASK, type LocalDataMover, runLocalDataMoverTask } from './local-data-mover.js';
import { recipeHandlers } from './recipe-handlers.js';

const here = dirname(fileURLToPath(import.meta.url));
export const BACKUP_DEFINITION = join(here, '..', '..', 'statemachines', 'backup.asl.json');

export type ProgressEvent =
  | { readonly type: 'state'; readonly state: string }
  | { readonly type: 'collected'; readonly blocks: number; readonly items: number }
  /** Worker threads were wanted but none can work (item-block-threads.ts): the workers run here. */
  | { readonly type: 'workers-in-process'; readonly reason: string }
  | {
      readonly type: 'message-done';
      readonly items: number;
      /** Whether a worker thread backed the message up (item-block-threads.ts), not this one. */
      readonly inThread: boolean;
      /** Which worker thread (its threadId). */
      readonly thread?: number;
    };

export interface LocalBackupOptions {
  readonly cluster: Cluster;
  readonly store: ObjectStore;
  readonly clock?: Clock;
  readonly workers?: number;
  /**
   * Worker threads the ItemBlock workers run in (item-block-threads.ts); 0: in this thread.
   * Default: the cores but one, at most 4. Threads are used only with a directory store, a
   * Kubernetes cluster and none of the in-process stand-ins below (wrapWorker, podExec,
   * snapshotter, csiSnapshots, clock); otherwise the workers run in this thread.
   */
  readonly threads?: number;
  readonly maxReceiveCount?: number;
  readonly itemBlocksTimeoutSeconds?: number;
  readonly pageSize?: number;
  readonly maxMessageBytes?: number;
  readonly onProgress?: (event: ProgressEvent) => void;
  /** Wraps the worker, e.g. for fault tests; the default runs it unchanged. */
  readonly wrapWorker?: (worker: (body: string) => Promise<void>) => (body: string) => Promise<void>;
  /** The execution's history, event by event (states entered and exited, Map iterations). */
  readonly onExecutionEvent?: (event: ExecutionEvent) => void;
  /** Exec for hooks; unset: through the cluster's own kubeconfig (a KubernetesCluster's). */
  readonly podExec?: PodExec;
  /** EC2 for native EBS snapshots of the cluster's PVs; unset: such snapshots fail, saying so. */
  readonly snapshotter?: Snapshotter;
  /** CSI snapshots on the cluster; unset: through the cluster itself (a KubernetesCluster), false: none. */
  readonly csiSnapshots?: CsiSnapshots | false;
  /** The first wait between looks at volume operations (deployed: 10 s). */
  readonly volumePollSeconds?: number;
  /** How long a worker runs one message's hooks before leaving blocks to the hook runner. */
  readonly inlineHookLimitSeconds?: number;
  /**
   * The hook runner's task, run as a child process: variables that reach a store other than a
   * directory (LIFEBOAT_BUCKET, AWS_*), and the kubeconfig (unset: the cluster's own).
   */
  readonly hookRunner?: {
    readonly storeEnvironment?: Record<string, string>;
    readonly kubeConfig?: KubeConfig;
  };
  /**
   * The data mover, run as a child process for each job (snapshotMoveData, fs-backup): the
   * repository its jobs name (a directory or a bucket, and the key that wraps its data key), the
   * region of the volumes' snapshots, and variables for the process (AWS endpoint and
   * credentials). Unset: volumes to move fail, saying so. fs-backup reads local PVs' directories
   * on this machine.
   */
  readonly dataMover?: LocalDataMover;
}

/** The credentials a KubernetesCluster reaches its cluster with (client-node's KubeConfig). */
type KubeConfig = KubernetesCluster['kubeConfig'];

function kubeConfigOf(options: LocalBackupOptions): KubeConfig {
  if (options.hookRunner?.kubeConfig) return options.hookRunner.kubeConfig;
  if (options.cluster instanceof KubernetesCluster) return options.cluster.kubeConfig;
  throw new LifeboatError('hooks need a Kubernetes cluster reached through a kubeconfig');
}

/** Hooks run in the backed-up cluster, reached with the same credentials as its listing. */
function podExecOf(options: LocalBackupOptions): () => Promise<PodExec> {
  return async () => {
    if (options.podExec) return options.podExec;
    return new KubernetesPodExec(kubeConfigOf(options));
  };
}

/** Native snapshots through the given EC2; CSI through the cluster's own API unless turned off. */
function volumeDepsOf(options: LocalBackupOptions): {
  snapshotter?: Snapshotter;
  csiFor?: (cluster: string) => Promise<CsiSnapshots>;
} {
  const csi =
    options.csiSnapshots === false
      ? undefined
      : (options.csiSnapshots ??
        (options.cluster instanceof KubernetesCluster
          ? new KubernetesCsiSnapshots(options.cluster)
          : undefined));
  return {
    ...(options.snapshotter ? { snapshotter: options.snapshotter } : {}),
    ...(csi ? { csiFor: async () => csi } : {}),
  };
}

/** Local stand-ins for the deployed functions' ARNs. */
export const LOCAL_FUNCTION_ARNS: Readonly<Record<string, string>> = {
  ValidateBackupFunctionArn: 'arn:aws:lambda:local:000000000000:function:ValidateBackup',
  CollectItemsFunctionArn: 'arn:aws:lambda:local:000000000000:function:CollectItems',
  VolumeOperationsFunctionArn: 'arn:aws:lambda:local:000000000000:function:VolumeOperations',
  FinalizeBackupFunctionArn: 'arn:aws:lambda:local:000000000000:function:FinalizeBackup',
  RecordBackupFailureFunctionArn: 'arn:aws:lambda:local:000000000000:function:RecordBackupFailure',
  // The hook runner's task: run locally as a child process (hook-runner-process.ts).
  ...LOCAL_HOOK_RUNNER_TASK,
  // The data mover's task: run locally as a child process (local-data-mover.ts).
  ...LOCAL_DATA_MOVER_TASK,
  CollectRecipeItemsFunctionArn: 'arn:aws:lambda:local:000000000000:function:CollectRecipeItems',
  BackupRecipeGroupFunctionArn: 'arn:aws:lambda:local:000000000000:function:BackupRecipeGroup',
  RunRecipeHookFunctionArn: 'arn:aws:lambda:local:000000000000:function:RunRecipeHook',
};

export async function runLocalBackup(request: unknown, options: LocalBackupOptions): Promise<JsonValue> {
  const clock = options.clock ?? systemClock;
  const callbacks = new LocalTaskCallbacks();
  const runId = `local-${randomUUID()}`;
  const taskToken = `token-${randomUUID()}`;
  const store = options.store;
  const progress = options.onProgress ?? (() => undefined);
  const podExec = podExecOf(options);
  const volumeDeps = volumeDepsOf(options);

  // The workers' settings, the same in this thread and in worker threads.
  const workerSettings: Pick<ThreadSettings, 'fileAccess' | 'inlineHookLimitMs'> = {
    ...(options.dataMover ? { fileAccess: 'local-paths' as const } : {}),
    ...(options.inlineHookLimitSeconds !== undefined
      ? { inlineHookLimitMs: options.inlineHookLimitSeconds * 1000 }
      : {}),
  };
  const inProcess = async (body: string): Promise<number> => {
    const result = await backupItemBlocks(parseItemBlockMessage(body), {
      store,
      callbacks,
      clock,
      podExecFor: podExec,
      ...volumeDeps,
      ...workerSettings,
    });
    return result.items.length;
  };
  // Made once the execution starts (below), so that whatever ends it also stops them.
  let threads: ItemBlockThreads | undefined;
  // Once the execution is over, messages still queued (or cut off in a stopped thread) are
  // dropped: nothing writes into a run that has returned.
  let over = false;
  const worker = async (body: string): Promise<void> => {
    if (over) return;
    const done = threads ? await threads.consume(body) : { items: await inProcess(body), inThread: false };
    progress({ type: 'message-done', ...done });
  };
  const queue = new MemoryWorkQueue({
    concurrency: options.workers ?? 4,
    maxReceiveCount: options.maxReceiveCount ?? 3,
    consume: options.wrapWorker ? options.wrapWorker(worker) : worker,
    deadLetter: async (body) => {
      // Only the first line is needed to name the items (see the dead-letter handler).
      const parsed = safeParseItemBlockHeader(body);
      if (!parsed.success) throw parsed.error;
      await recordDeadLetter(parsed.data, { store, callbacks, clock });
    },
  });

  // ecs:runTask.sync: the same RunTask request Step Functions would send; its container
  // override drives the hook runner, run as a child process.
  const runTask = async (input: JsonValue): Promise<JsonValue> => {
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
  const definition = substitute(await readFile(BACKUP_DEFINITION, 'utf8'), LOCAL_FUNCTION_ARNS);
  const handlers: Record<string, (input: JsonValue) => Promise<JsonValue>> = {
    ValidateBackup: async (input) => {
      progress({ type: 'state', state: 'ValidateBackup' });
      const parsed = validateBackupInput.parse(input);
      return (await validateBackup(
        { request: parsed.request, runId: parsed.runId },
        {
          store,
          clock,
          itemBlocksTimeoutSeconds: options.itemBlocksTimeoutSeconds ?? 3600,
          ...(options.cluster instanceof KubernetesCluster
            ? { clusterNamed: async () => options.cluster as KubernetesCluster }
            : {}),
        },
      )) as JsonValue;
    },
    CollectItems: async (input) => {
      progress({ type: 'state', state: 'CollectItems' });
      const payload = collectItemsInput.parse((input as { Payload?: unknown }).Payload);
      const done = callbacks.wait(payload.taskToken);
      const summary = await collectItems(payload, {
        cluster: options.cluster,
        store,
        queue,
        callbacks,
        clock,
        ...(options.pageSize ? { pageSize: options.pageSize } : {}),
        ...(options.maxMessageBytes ? { maxMessageBytes: options.maxMessageBytes } : {}),
      });
      progress({ type: 'collected', blocks: summary.blocks, items: summary.items });
      return (await done) as JsonValue;
    },
    RunLongHookBlock: async (input) => {
      progress({ type: 'state', state: 'RunLongHookBlock' });
      return runTask(input);
    },
    ...recipeHandlers({
      cluster: options.cluster,
      store,
      queue,
      callbacks,
      clock,
      podExecFor: podExec,
      inlineHookLimitMs: (options.inlineHookLimitSeconds ?? 600) * 1000,
      runTask,
      onState: (state) => progress({ type: 'state', state }),
      ...(options.pageSize ? { pageSize: options.pageSize } : {}),
      ...(options.maxMessageBytes ? { maxMessageBytes: options.maxMessageBytes } : {}),
    }),
    VolumeOperations: async (input) => {
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
    },
    RunDataMover: async (input) => {
      progress({ type: 'state', state: 'RunDataMover' });
      return runLocalDataMoverTask(input, options.dataMover?.environment);
    },
    FinalizeBackup: async (input) => {
      progress({ type: 'state', state: 'FinalizeBackup' });
      const { run } = (input ?? {}) as { run?: unknown };
      return (await finalizeBackup({ run: backupRun.parse(run) }, { store, clock })) as unknown as JsonValue;
    },
    RecordBackupFailure: async (input) => {
      progress({ type: 'state', state: 'RecordBackupFailure' });
      const { run, failure } = (input ?? {}) as {
        run?: unknown;
        failure?: { Error?: string; Cause?: string };
      };
      return (await recordBackupFailure(
        { run: backupRun.parse(run), failure: failure ?? {} },
        { store, clock },
      )) as unknown as JsonValue;
    },
  };
  try {
    threads = itemBlockThreadsFor(options, { callbacks, fallback: inProcess, workerSettings });
    void threads?.unavailable.then((reason) => {
      if (reason !== undefined && !over) progress({ type: 'workers-in-process', reason });
    });
    return await runLocalStateMachine({
      definition,
      input: { request: request as JsonValue },
      handlers,
      executionName: runId,
      taskToken,
      ...(options.onExecutionEvent ? { onEvent: options.onExecutionEvent } : {}),
    });
  } finally {
    // Let in-flight workers settle, but never wait on a stuck one.
    await Promise.race([queue.idle(), new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
    over = true;
    await threads?.close();
  }
}

/** Worker threads for the ItemBlock workers, when the options allow them (see `threads`). */
function itemBlockThreadsFor(
  options: LocalBackupOptions,
  wiring: {
    callbacks: LocalTaskCallbacks;
    fallback: (body: string) => Promise<number>;
    workerSettings: Pick<ThreadSettings, 'fileAccess' | 'inlineHookLimitMs'>;
  },
): ItemBlockThreads | undefined {
  const count = options.threads ?? defaultItemBlockThreads();
  if (
    count <= 0 ||
    !(options.store instanceof LocalDirectoryStore) ||
    !(options.cluster instanceof KubernetesCluster) ||
    options.wrapWorker ||
    options.podExec ||
    options.snapshotter ||
    options.csiSnapshots ||
    options.clock
  )
    return undefined;
  return new ItemBlockThreads({
    count,
    callbacks: wiring.callbacks,
    fallback: wiring.fallback,
    settings: {
      // A directory store's location is `file://` and its resolved root.
      storeRoot: options.store.location.slice('file://'.length),
      kubeconfig: options.cluster.kubeConfig.exportConfig(),
      execKubeconfig: kubeConfigOf(options).exportConfig(),
      csi: options.csiSnapshots !== false,
      ...wiring.workerSettings,
    },
  });
}
