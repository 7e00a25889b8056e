/** Lambda entry of CheckDrillItems. */
import { drillRun } from '../../shared/contracts/drill.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clusterNamed, store } from '../common/wiring.js';
import { checkDrillItems } from './check-drill-items.js';

export const handler = lambdaHandler('CheckDrillItems', async (event: { run?: unknown }, signal) =>
  checkDrillItems({ run: drillRun.parse(event.run) }, { store, clusterNamed, signal }),
);
