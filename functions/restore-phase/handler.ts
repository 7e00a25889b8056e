/** Lambda entry of RestorePhase: one chunk of one phase, as the inner Map of the restore passes it. */
import { restoreChunk } from '../../shared/contracts/restore-run.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, clusterNamed, renewRun, store } from '../common/wiring.js';
import { restorePhase } from './restore-phase.js';

export const handler = lambdaHandler('RestorePhase', async (event: unknown, signal) => {
  const input = restoreChunk.parse(event);
  await renewRun('restore', input.run, signal);
  return restorePhase(input, { store, clock, cluster: await clusterNamed(input.run.cluster), signal });
});
