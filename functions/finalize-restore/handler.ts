/** Lambda entry of FinalizeRestore. */
import { restoreRun } from '../../shared/contracts/restore-run.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, renewRun, store } from '../common/wiring.js';
import { finalizeRestore } from './finalize-restore.js';

export const handler = lambdaHandler('FinalizeRestore', async (event: { run?: unknown }, signal) => {
  const run = restoreRun.parse(event.run);
  await renewRun('restore', run, signal);
  return finalizeRestore({ run }, { store, clock });
});
