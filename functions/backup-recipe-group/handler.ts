/** Lambda entry of BackupRecipeGroup (invoked with a task token; the workers complete the wait). */
import { recipeGroupInput } from '../../shared/contracts/recipe-run.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { callbacks, queue, renewRun, store } from '../common/wiring.js';
import { backupRecipeGroup } from './backup-recipe-group.js';

export const handler = lambdaHandler('BackupRecipeGroup', async (event: unknown, signal) => {
  const input = recipeGroupInput.parse(event);
  await renewRun('backup', input.run, signal);
  return backupRecipeGroup(input, { store, queue: queue(), callbacks, signal });
});
