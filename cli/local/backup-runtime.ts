/**
 * `lifeboat --local` for backups: executes statemachines/backup.asl.json in this process,
 * each Task resolved to the same use case its Lambda runs (backup-handlers.ts), the queue and its
 * workers in memory, the backup written to a directory (or any object store). Output a person can
 * follow comes through `onProgress`. Never changes the definition it runs.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { backupItemBlocks, recordDeadLetter } from '../../functions/backup-item-block/backup-item-block.js';
import { KubernetesCluster } from '../../shared/adapters/kubernetes-cluster.js';
import { LocalDirectoryStore } from '../../shared/adapters/local-directory-store.js';
import {
  type JsonValue,
  runLocalStateMachine,
  substitute,
} from '../../shared/adapters/local-state-machine.js';
import type { LocalTaskCallbacks } from '../../shared/adapters/local-task-callbacks.js';
import { MemoryWorkQueue } from '../../shared/adapters/memory-work-queue.js';
import { parseItemBlockMessage, safeParseItemBlockHeader } from '../../shared/contracts/item-block-wire.js';
import { backupTaskHandlers } from './backup-handlers.js';
import {
  kubeConfigOf,
  type LocalBackupOptions,
  type LocalBackupRun,
  localBackupRun,
} from './backup-options.js';
import { LOCAL_HOOK_RUNNER_TASK } from './hook-runner-process.js';
import type { ThreadSettings } from './item-block-thread-protocol.js';
import { defaultItemBlockThreads, ItemBlockThreads } from './item-block-threads.js';
import { LOCAL_DATA_MOVER_TASK } from './local-data-mover.js';
import { runtimeFiles } from './runtime-files.js';

export type { LocalBackupOptions, ProgressEvent } from './backup-options.js';

export const BACKUP_DEFINITION = runtimeFiles.statemachine('backup');

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
  const run = localBackupRun(options);
  const runId = options.executionName ?? `local-${randomUUID()}`;
  const taskToken = `token-${randomUUID()}`;
  const workers = new ItemBlockWorkers(run, taskToken);
  const definition = substitute(await readFile(BACKUP_DEFINITION, 'utf8'), LOCAL_FUNCTION_ARNS);
  const handlers = backupTaskHandlers({ ...run, queue: workers.queue });
  try {
    workers.start();
    return await runLocalStateMachine({
      definition,
      input: { request: request as JsonValue },
      handlers,
      executionName: runId,
      taskToken,
      ...(options.onExecutionEvent ? { onEvent: options.onExecutionEvent } : {}),
    });
  } finally {
    await workers.stop();
    await run.claim.release();
  }
}

/** The workers' settings, the same in this thread and in worker threads. */
type WorkerSettings = Pick<ThreadSettings, 'fileAccess' | 'inlineHookLimitMs'>;

/**
 * The run's ItemBlock workers: the in-memory queue CollectItems sends to, its messages backed up
 * in worker threads when the options allow them (see `threads`), otherwise in this thread.
 */
class ItemBlockWorkers {
  readonly queue: MemoryWorkQueue;
  private readonly settings: WorkerSettings;
  // Made once the execution starts (start), so that whatever ends it also stops them.
  private threads: ItemBlockThreads | undefined;
  // Once the execution is over, messages still queued (or cut off in a stopped thread) are
  // dropped: nothing writes into a run that has returned.
  private over = false;

  constructor(
    private readonly run: LocalBackupRun,
    /** The token the ItemBlocks' wait completes: failed when a message is lost for good. */
    taskToken: string,
  ) {
    const { options, store, callbacks, clock } = run;
    this.settings = {
      ...(options.dataMover ? { fileAccess: 'local-paths' as const } : {}),
      ...(options.inlineHookLimitSeconds !== undefined
        ? { inlineHookLimitMs: options.inlineHookLimitSeconds * 1000 }
        : {}),
    };
    const worker = (body: string): Promise<void> => this.consume(body);
    this.queue = new MemoryWorkQueue({
      concurrency: options.workers ?? 4,
      maxReceiveCount: options.maxReceiveCount ?? 3,
      consume: options.wrapWorker ? options.wrapWorker(worker) : worker,
      deadLetter: async (body, lastError) => {
        // Only the first line is needed to name the items (see the dead-letter handler).
        const parsed = safeParseItemBlockHeader(body);
        if (!parsed.success) throw parsed.error;
        await recordDeadLetter(parsed.data, { store, callbacks, clock, lastError });
      },
      // Neither backed up nor recorded as a dead letter (a full disk): the wait fails now,
      // rather than after the ItemBlocks' timeout.
      onError: (error) =>
        void callbacks.fail(taskToken, {
          name: 'ItemBlockLost',
          cause: `an ItemBlock message could be neither backed up nor recorded as a dead letter: ${error instanceof Error ? error.message : String(error)}`,
        }),
    });
  }

  /** The worker in this thread: backs up one message, returns its items' count. */
  private readonly inProcess = async (body: string): Promise<number> => {
    const { store, callbacks, clock, podExec, volumeDeps } = this.run;
    const result = await backupItemBlocks(parseItemBlockMessage(body), {
      store,
      callbacks,
      clock,
      podExecFor: podExec,
      ...volumeDeps,
      ...this.settings,
    });
    return result.items.length;
  };

  private async consume(body: string): Promise<void> {
    if (this.over) return;
    const done = this.threads
      ? await this.threads.consume(body)
      : { items: await this.inProcess(body), inThread: false };
    this.run.progress({ type: 'message-done', ...done });
  }

  /** Starts the worker threads, if any; says so when they turn out unavailable. */
  start(): void {
    this.threads = itemBlockThreadsFor(this.run.options, {
      callbacks: this.run.callbacks,
      fallback: this.inProcess,
      workerSettings: this.settings,
    });
    void this.threads?.unavailable.then((reason) => {
      if (reason !== undefined && !this.over) this.run.progress({ type: 'workers-in-process', reason });
    });
  }

  /** Lets in-flight workers settle, but never waits on a stuck one; then stops the threads. */
  async stop(): Promise<void> {
    await Promise.race([this.queue.idle(), new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
    this.over = true;
    await this.threads?.close();
  }
}

/** Worker threads for the ItemBlock workers, when the options allow them (see `threads`). */
function itemBlockThreadsFor(
  options: LocalBackupOptions,
  wiring: {
    callbacks: LocalTaskCallbacks;
    fallback: (body: string) => Promise<number>;
    workerSettings: WorkerSettings;
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
