/** Lambda entry of ClearDrillNamespaces. */
import { drillRun } from '../../shared/contracts/drill.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, clusterNamed, store } from '../common/wiring.js';
import { clearDrillNamespaces } from './clear-drill-namespaces.js';

export const handler = lambdaHandler('ClearDrillNamespaces', async (event: { run?: unknown }, signal) =>
  clearDrillNamespaces({ run: drillRun.parse(event.run) }, { store, clock, clusterNamed, signal }),
);
