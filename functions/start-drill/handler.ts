/** Lambda entry of StartDrill. */
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, store } from '../common/wiring.js';
import { startDrill } from './start-drill.js';

export const handler = lambdaHandler(
  'StartDrill',
  async (event: { request?: unknown; runId?: string }, signal) =>
    startDrill({ request: event.request, runId: String(event.runId ?? '') }, { store, clock, signal }),
);
