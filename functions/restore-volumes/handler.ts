/** Lambda entry of RestoreVolumes: re-creates native snapshot volumes before the phases. */
import { restoreRun } from '../../shared/contracts/restore-run.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, snapshotter, store } from '../wiring.js';
import { restoreVolumes } from './restore-volumes.js';

export const handler = lambdaHandler('RestoreVolumes', async (event: { run?: unknown }, signal) =>
  restoreVolumes({ run: restoreRun.parse(event.run) }, { store, clock, snapshotter: snapshotter(), signal }),
);
