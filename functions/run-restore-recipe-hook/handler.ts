/** Lambda entry of RunRestoreRecipeHook; RecipeStepFailed reaches the state machine by its name. */
import { KubernetesPodExec } from '../../shared/adapters/kubernetes-pod-exec.js';
import { restoreRecipeHookInput } from '../../shared/contracts/restore-run.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, clusterNamed, renewRun, store } from '../common/wiring.js';
import { runRestoreRecipeHook } from './run-restore-recipe-hook.js';

export const handler = lambdaHandler('RunRestoreRecipeHook', async (event: unknown, signal) => {
  const input = restoreRecipeHookInput.parse(event);
  await renewRun('restore', input.run, signal);
  const cluster = await clusterNamed(input.run.cluster);
  const podExec = new KubernetesPodExec(cluster.kubeConfig);
  return runRestoreRecipeHook(input, { store, cluster, podExec, clock, signal });
});
