/** Lambda entry of RecordRestoreFailure (the restore state machine's Catch). */
import { restoreRun } from '../../shared/contracts/restore-run.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, store } from '../common/wiring.js';
import { recordRestoreFailure } from './record-restore-failure.js';

export const handler = lambdaHandler(
  'RecordRestoreFailure',
  async (event: { run?: unknown; failure?: { Error?: string; Cause?: string } }) =>
    recordRestoreFailure(
      { run: restoreRun.parse(event.run), failure: event.failure ?? {} },
      { store, clock },
    ),
);
