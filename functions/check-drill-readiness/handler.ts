/** Lambda entry of CheckDrillReadiness: one look, never a wait (the workflow's Wait state waits). */
import { drillRun } from '../../shared/contracts/drill.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, clusterNamed, store } from '../common/wiring.js';
import { checkDrillReadiness } from './check-drill-readiness.js';

export const handler = lambdaHandler('CheckDrillReadiness', async (event: { run?: unknown }, signal) =>
  checkDrillReadiness({ run: drillRun.parse(event.run) }, { store, clock, clusterNamed, signal }),
);
