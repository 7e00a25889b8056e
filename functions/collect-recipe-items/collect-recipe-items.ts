/**
 * CollectRecipeItems: for a backup that names a recipe, resolves the recipe (inline or from its
 * ConfigMap; problems by field path end the backup FailedValidation), lists the selected items
 * once with CollectItems' own code, and keeps each group step's ItemBlock messages in the
 * working data (RecipeStepQueue) instead of sending them: the RecipeSteps Map then runs the
 * workflow's steps one after the other. Returns the steps, small: names and kinds only.
 */
import { backupRequest } from '../../shared/contracts/backup-request.js';
import type { BackupRun } from '../../shared/contracts/backup-run.js';
import { rejectedRequest, type ValidationResult } from '../../shared/contracts/kubernetes.js';
import type { Recipe } from '../../shared/contracts/recipe.js';
import type { RecipeCollected, RecipeStepRef } from '../../shared/contracts/recipe-run.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import { backupWorkKeys } from '../../shared/domain/storage/keys.js';
import type { LogEvent } from '../../shared/domain/storage/log.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { Cluster, ClusterWriter } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { TaskCallbacks } from '../../shared/ports/task-callbacks.js';
import { collectItems } from '../collect-items/collect-items.js';
import { RecipeStepQueue, type StepCounts } from './recipe-step-queue.js';
import { type ResolvedRecipe, resolveRecipe } from './resolve-recipe.js';

export interface CollectRecipeItemsDeps {
  readonly cluster: Cluster & Pick<ClusterWriter, 'read'>;
  readonly store: ObjectStore;
  readonly clock: Clock;
  /** A hook step whose commands could run longer than this goes to the hook runner. */
  readonly inlineHookLimitMs: number;
  readonly pageSize?: number;
  readonly maxMessageBytes?: number;
  readonly signal?: AbortSignal;
}

/** Nobody waits on this collection: its messages are sent step by step later. */
const noWait: TaskCallbacks = { succeed: async () => undefined, fail: async () => undefined };

/** The workflow's steps; a hook step is long when its commands may outlast the inline limit. */
export function recipeSteps(recipe: Recipe, inlineHookLimitMs: number): RecipeStepRef[] {
  return (recipe.workflows.backup ?? []).map((step, index) => {
    if ('group' in step)
      return { index, kind: 'group', name: step.group, long: false, messages: 0, items: 0 };
    const hook = recipe.hooks.find((h) => h.name === step.hook);
    // A hook's commands run one after another on each pod, the pods at once.
    const worstCaseMs = hook ? hook.commands.length * hook.timeoutMs : 0;
    return {
      index,
      kind: 'hook',
      name: step.hook,
      long: worstCaseMs > inlineHookLimitMs,
      messages: 0,
      items: 0,
    };
  });
}

export async function collectRecipeItems(
  input: { run: BackupRun },
  deps: CollectRecipeItemsDeps,
): Promise<RecipeCollected> {
  const { run } = input;
  const resolved = await resolveRecipeOfRun(run, deps);
  if (!resolved.ok) return rejectedRequest(resolved.problems);
  const { recipe, stored } = resolved.value;
  await deps.store.put(backupWorkKeys(run).recipe, JSON.stringify(stored), {
    contentType: 'application/json',
  });

  const steps = recipeSteps(recipe, deps.inlineHookLimitMs);
  const queue = new RecipeStepQueue({
    store: deps.store,
    run,
    groups: groupStepsOf(recipe, steps),
    ...(deps.maxMessageBytes ? { maxMessageBytes: deps.maxMessageBytes } : {}),
  });
  const summary = await collectItems(
    { run, taskToken: 'recipe-steps' },
    {
      cluster: deps.cluster,
      store: deps.store,
      queue,
      callbacks: noWait,
      clock: deps.clock,
      ...(deps.pageSize ? { pageSize: deps.pageSize } : {}),
      ...(deps.maxMessageBytes ? { maxMessageBytes: deps.maxMessageBytes } : {}),
      ...(deps.signal ? { signal: deps.signal } : {}),
    },
  );
  const counts = await queue.close(deps.signal ? { signal: deps.signal } : undefined);
  await appendRecipeLog({ run, deps, source: stored.source, steps, counts, unassigned: queue.unassigned });
  const counted = steps.map((step) => {
    const c = counts.get(step.index);
    return c ? { ...step, messages: c.messages, items: c.items } : step;
  });
  return { valid: true, attempt: summary.attempt, steps: counted };
}

/** The recipe the run's request names, resolved; a request without one is not a recipe backup. */
async function resolveRecipeOfRun(
  run: BackupRun,
  deps: CollectRecipeItemsDeps,
): Promise<ValidationResult<ResolvedRecipe>> {
  const raw = await deps.store.get(backupWorkKeys(run).request, { signal: deps.signal });
  if (!raw) throw new LifeboatError(`the request of backup ${run.name} is missing from the working data`);
  const request = backupRequest.parse(JSON.parse(Buffer.from(raw).toString('utf8')));
  const resolved = await resolveRecipe(request, {
    cluster: deps.cluster,
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  if (!resolved) throw new LifeboatError(`backup ${run.name} names no recipe`);
  return resolved;
}

/** The group steps, each with the filter of its group. */
function groupStepsOf(
  recipe: Recipe,
  steps: readonly RecipeStepRef[],
): { step: number; filter: Recipe['groups'][number] }[] {
  return steps.flatMap((step) => {
    const filter = step.kind === 'group' ? recipe.groups.find((g) => g.name === step.name) : undefined;
    return filter ? [{ step: step.index, filter }] : [];
  });
}

/** The recipe's part of the collection log, after CollectItems' own lines. */
async function appendRecipeLog(options: {
  run: BackupRun;
  deps: CollectRecipeItemsDeps;
  source: string;
  steps: readonly RecipeStepRef[];
  counts: ReadonlyMap<number, StepCounts>;
  unassigned: number;
}): Promise<void> {
  const { run, deps, steps, counts } = options;
  const work = backupWorkKeys(run);
  const time = deps.clock.now().toISOString();
  const lines: LogEvent[] = [
    {
      time,
      level: 'info',
      msg: 'Backup follows a recipe',
      fields: { backup: run.name, recipe: options.source, steps: steps.length },
    },
    ...steps.map((step): LogEvent => {
      const c = counts.get(step.index);
      return {
        time,
        level: 'info',
        msg: step.kind === 'group' ? 'Recipe group step' : 'Recipe hook step',
        fields: {
          backup: run.name,
          step: step.index,
          name: step.name,
          ...(c ? { items: c.items, messages: c.messages } : {}),
        },
      };
    }),
  ];
  if (options.unassigned > 0)
    lines.push({
      time,
      level: 'info',
      msg: 'Items in no group of the recipe are not backed up',
      fields: { backup: run.name, items: options.unassigned },
    });
  const logged = await deps.store.get(work.collectLog, { signal: deps.signal });
  const log = logged ? (JSON.parse(Buffer.from(logged).toString('utf8')) as LogEvent[]) : [];
  await deps.store.put(work.collectLog, JSON.stringify([...log, ...lines]), {
    contentType: 'application/json',
  });
}
