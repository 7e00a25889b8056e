/** Lambda entry of FinishDrill. */
import { drillRestoreEnd, drillRun } from '../../shared/contracts/drill.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, store } from '../common/wiring.js';
import { finishDrill } from './finish-drill.js';

export const handler = lambdaHandler(
  'FinishDrill',
  async (event: { run?: unknown; restore?: unknown }, signal) =>
    finishDrill(
      { run: drillRun.parse(event.run), restore: drillRestoreEnd.parse(event.restore) },
      { store, clock, signal },
    ),
);
