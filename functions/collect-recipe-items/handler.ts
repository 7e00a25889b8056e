/** Lambda entry of CollectRecipeItems (a plain invoke: nothing waits on its messages yet). */
import { backupRun } from '../../shared/contracts/backup-run.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, clusterNamed, env, store } from '../common/wiring.js';
import { collectRecipeItems } from './collect-recipe-items.js';

export const handler = lambdaHandler('CollectRecipeItems', async (event: { run?: unknown }, signal) => {
  const run = backupRun.parse(event.run);
  const cluster = await clusterNamed(run.cluster);
  return collectRecipeItems(
    { run },
    { cluster, store, clock, inlineHookLimitMs: env.LIFEBOAT_INLINE_HOOK_LIMIT_SECONDS * 1000, signal },
  );
});
