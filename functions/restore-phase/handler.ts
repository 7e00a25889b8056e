/** Lambda entry of RestorePhase (one phase of the Map). */
import { restorePhase as phaseSchema, restoreRun } from '../../shared/contracts/restore-run.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, clusterNamed, store } from '../wiring.js';
import { restorePhase } from './restore-phase.js';

export const handler = lambdaHandler(
  'RestorePhase',
  async (event: { run?: unknown; phase?: unknown }, signal) => {
    const run = restoreRun.parse(event.run);
    const phase = phaseSchema.parse(event.phase);
    return restorePhase({ run, phase }, { store, clock, cluster: await clusterNamed(run.cluster), signal });
  },
);
