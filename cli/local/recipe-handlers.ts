/**
 * The recipe states of backup.asl.json under `lifeboat --local`: each resolved to the use case its
 * Lambda runs (CollectRecipeItems, BackupRecipeGroup, RunRecipeHook), and the hook runner tasks
 * (RunLongRecipeHook, RunRecipeLongHookBlock) started as child processes from their RunTask
 * request, as for RunLongHookBlock. Each group step's wait gets a token of its own, as each
 * task token is in Step Functions: a late worker of an earlier step can never end a later wait.
 */
import { randomUUID } from 'node:crypto';
import { backupRecipeGroup } from '../../functions/backup-recipe-group/backup-recipe-group.js';
import { collectRecipeItems } from '../../functions/collect-recipe-items/collect-recipe-items.js';
import { runRecipeHook } from '../../functions/run-recipe-hook/run-recipe-hook.js';
import type { JsonValue } from '../../shared/adapters/local-state-machine.js';
import type { LocalTaskCallbacks } from '../../shared/adapters/local-task-callbacks.js';
import { backupRun } from '../../shared/contracts/backup-run.js';
import { recipeGroupInput, recipeStepInput } from '../../shared/contracts/recipe-run.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { Cluster, ClusterWriter } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { PodExec } from '../../shared/ports/pod-exec.js';
import type { WorkQueue } from '../../shared/ports/work-queue.js';

type Handler = (input: JsonValue) => Promise<JsonValue>;

/** What the recipe states share with the rest of the local backup. */
export interface RecipeHandlersContext {
  readonly cluster: Cluster;
  readonly store: ObjectStore;
  readonly queue: WorkQueue;
  readonly callbacks: LocalTaskCallbacks;
  readonly clock: Clock;
  readonly podExecFor: (cluster: string) => Promise<PodExec>;
  readonly inlineHookLimitMs: number;
  /** Runs the hook runner for a RunTask request (the same as RunLongHookBlock's). */
  readonly runTask: (input: JsonValue) => Promise<JsonValue>;
  readonly onState: (state: string) => void;
  readonly pageSize?: number;
  readonly maxMessageBytes?: number;
}

export function recipeHandlers(context: RecipeHandlersContext): Record<string, Handler> {
  const { store, clock } = context;
  return {
    CollectRecipeItems: collectRecipeItemsHandler(context),
    BackupRecipeGroup: backupRecipeGroupHandler(context),
    RunRecipeHook: async (input) => {
      context.onState('RunRecipeHook');
      return (await runRecipeHook(recipeStepInput.parse(input), {
        store,
        clock,
        cluster: context.cluster,
        podExecFor: context.podExecFor,
      })) as JsonValue;
    },
    RunLongRecipeHook: async (input) => {
      context.onState('RunLongRecipeHook');
      return context.runTask(input);
    },
    RunRecipeLongHookBlock: async (input) => {
      context.onState('RunRecipeLongHookBlock');
      return context.runTask(input);
    },
  };
}

/** The recipe's ConfigMap is read when the state runs: a cluster that cannot read fails it then. */
function readerOf(context: RecipeHandlersContext): Cluster & Pick<ClusterWriter, 'read'> {
  const cluster = context.cluster as Partial<ClusterWriter> & Cluster;
  if (typeof cluster.read !== 'function')
    throw new LifeboatError('a recipe ConfigMap is read from a cluster that can read objects');
  return cluster as Cluster & Pick<ClusterWriter, 'read'>;
}

function collectRecipeItemsHandler(context: RecipeHandlersContext): Handler {
  const { store, clock } = context;
  return async (input) => {
    context.onState('CollectRecipeItems');
    const { run } = (input ?? {}) as { run?: unknown };
    return (await collectRecipeItems(
      { run: backupRun.parse(run) },
      {
        cluster: readerOf(context),
        store,
        clock,
        inlineHookLimitMs: context.inlineHookLimitMs,
        ...(context.pageSize ? { pageSize: context.pageSize } : {}),
        ...(context.maxMessageBytes ? { maxMessageBytes: context.maxMessageBytes } : {}),
      },
    )) as JsonValue;
  };
}

/** Each group step waits on a token of its own (see the header). */
function backupRecipeGroupHandler(context: RecipeHandlersContext): Handler {
  return async (input) => {
    context.onState('BackupRecipeGroup');
    const payload = recipeGroupInput.parse((input as { Payload?: unknown }).Payload);
    const taskToken = `${payload.taskToken}-step-${payload.step.index}-${randomUUID()}`;
    const done = context.callbacks.wait(taskToken);
    // Observed at once (see collectItemsHandler): a late failure of the wait is never unhandled.
    done.catch(() => undefined);
    await backupRecipeGroup(
      { ...payload, taskToken },
      { store: context.store, queue: context.queue, callbacks: context.callbacks },
    );
    return (await done) as JsonValue;
  };
}
