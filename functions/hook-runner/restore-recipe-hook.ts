/**
 * The hook runner's run of a recipe restore's hook step whose commands may outlast a Lambda
 * (seed 002's one-hour post-workload hook): RunRestoreRecipeHook's own use case, without its
 * Lambda budget — it waits for the pods and runs each command with its full timeout, calling
 * again after each hand-back until the step is settled. The step's result is written by the use
 * case; RunRestoreRecipeHook reads it afterwards (and throws RecipeStepFailed there). Never
 * prints a hook's output: that goes into the restore log only.
 */
import type { RestoreRecipeHookInput } from '../../shared/contracts/restore-run.js';
import { RecipeStepFailed } from '../../shared/domain/errors.js';
import {
  type RunRestoreRecipeHookDeps,
  runRestoreRecipeHook,
} from '../run-restore-recipe-hook/run-restore-recipe-hook.js';

/** As long as the state machine lets the task run (RunLongRestoreRecipeHook's TimeoutSeconds). */
const TASK_LIMIT_MS = 12 * 3_600_000;

export async function runLongRestoreRecipeHook(
  input: RestoreRecipeHookInput,
  deps: Omit<RunRestoreRecipeHookDeps, 'maxRunMs' | 'pollMs'>,
): Promise<{ step: number; stopped?: string }> {
  for (;;) {
    try {
      const progress = await runRestoreRecipeHook(input, {
        ...deps,
        maxRunMs: TASK_LIMIT_MS,
        pollMs: TASK_LIMIT_MS,
      });
      if (progress.done) return { step: input.step.index };
      await new Promise((resolve) => setTimeout(resolve, (deps.waitSeconds ?? 10) * 1000));
    } catch (error) {
      if (error instanceof RecipeStepFailed) return { step: input.step.index, stopped: error.message };
      throw error;
    }
  }
}
