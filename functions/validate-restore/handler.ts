/** Lambda entry of ValidateRestore. */
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, clusterNamed, store } from '../common/wiring.js';
import { validateRestore } from './validate-restore.js';

export const handler = lambdaHandler(
  'ValidateRestore',
  async (event: { request?: unknown; runId?: string }, signal) =>
    validateRestore(
      { request: event.request, runId: String(event.runId ?? '') },
      { store, clock, clusterNamed, signal },
    ),
);
