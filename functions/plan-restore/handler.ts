/** Lambda entry of PlanRestore. */
import { restoreRun } from '../../shared/contracts/restore-run.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clusterNamed, env, store, volumeHome } from '../common/wiring.js';
import { planRestore } from './plan-restore.js';

export const handler = lambdaHandler('PlanRestore', async (event: { run?: unknown }, signal) => {
  const run = restoreRun.parse(event.run);
  return planRestore(
    { run },
    {
      store,
      cluster: await clusterNamed(run.cluster),
      inlineHookLimitMs: env.LIFEBOAT_INLINE_HOOK_LIMIT_SECONDS * 1000,
      ...(volumeHome ? { volumeHome } : {}),
      signal,
    },
  );
});
