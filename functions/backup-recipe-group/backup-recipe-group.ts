/**
 * BackupRecipeGroup: one group step of a recipe's backup workflow. Sends the ItemBlock messages
 * CollectRecipeItems kept for this step to the workers and waits (task token) until each has a
 * result — the same workers, hooks and results as any backup; only this step's messages count
 * (`waitPrefix`). The next step starts after this one's blocks, long hook runs included, are done.
 * Idempotent: a retried step sends the same messages again (workers rewrite the same results).
 */
import { type BackupRun, collectedSummary } from '../../shared/contracts/backup-run.js';
import type { RecipeStepRef } from '../../shared/contracts/recipe-run.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import { backupWorkKeys, recipeStepMessagePrefix } from '../../shared/domain/storage/keys.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { TaskCallbacks } from '../../shared/ports/task-callbacks.js';
import type { WorkQueue } from '../../shared/ports/work-queue.js';
import { completeIfDone } from '../common/backup-completion.js';

export interface BackupRecipeGroupDeps {
  readonly store: ObjectStore;
  readonly queue: WorkQueue;
  readonly callbacks: TaskCallbacks;
  readonly signal?: AbortSignal;
}

export async function backupRecipeGroup(
  input: { run: BackupRun; step: RecipeStepRef; taskToken: string },
  deps: BackupRecipeGroupDeps,
): Promise<{ messages: number }> {
  const { run, step } = input;
  const work = backupWorkKeys(run);
  const raw = await deps.store.get(work.collected, { signal: deps.signal });
  if (!raw) throw new LifeboatError(`the collection summary of backup ${run.name} is missing`);
  const summary = collectedSummary.parse(JSON.parse(Buffer.from(raw).toString('utf8')));
  // The wait this step's workers complete: written before any message leaves.
  await deps.store.put(
    work.collected,
    JSON.stringify({
      ...summary,
      messages: step.messages,
      items: step.items,
      taskToken: input.taskToken,
      waitPrefix: recipeStepMessagePrefix(summary.attempt, step.index),
    }),
    { contentType: 'application/json' },
  );
  for (const key of await deps.store.list(work.stepMessagesDir(step.index), { signal: deps.signal })) {
    const batch = await deps.store.get(key, { signal: deps.signal });
    if (!batch) throw new LifeboatError(`the messages ${key} of backup ${run.name} are missing`);
    await deps.queue.send(JSON.parse(Buffer.from(batch).toString('utf8')) as string[], {
      signal: deps.signal,
    });
  }
  // A step without messages (or whose workers were all faster) completes its own wait.
  await completeIfDone({ run, store: deps.store, callbacks: deps.callbacks, signal: deps.signal });
  return { messages: step.messages };
}
