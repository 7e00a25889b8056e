/** Lambda entry of FinalizeRestore. */
import { restoreRun } from '../../shared/contracts/restore-run.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, store } from '../common/wiring.js';
import { finalizeRestore } from './finalize-restore.js';

export const handler = lambdaHandler('FinalizeRestore', async (event: { run?: unknown }) =>
  finalizeRestore({ run: restoreRun.parse(event.run) }, { store, clock }),
);
