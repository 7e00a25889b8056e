/** Lambda entry of RunRecipeHook; RecipeStepFailed reaches the state machine by its name. */
import { recipeStepInput } from '../../shared/contracts/recipe-run.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, clusterNamed, podExecNamed, renewRun, store } from '../common/wiring.js';
import { runRecipeHook } from './run-recipe-hook.js';

export const handler = lambdaHandler('RunRecipeHook', async (event: unknown, signal) => {
  const input = recipeStepInput.parse(event);
  await renewRun('backup', input.run, signal);
  const cluster = await clusterNamed(input.run.cluster);
  return runRecipeHook(input, { store, clock, cluster, podExecFor: podExecNamed, signal });
});
