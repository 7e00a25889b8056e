/** Lambda entry of RecordBackupFailure (the state machine's Catch). */
import { backupRun } from '../../shared/contracts/backup-run.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, store } from '../common/wiring.js';
import { recordBackupFailure } from './record-backup-failure.js';

export const handler = lambdaHandler(
  'RecordBackupFailure',
  async (event: { run?: unknown; failure?: { Error?: string; Cause?: string } }) =>
    recordBackupFailure({ run: backupRun.parse(event.run), failure: event.failure ?? {} }, { store, clock }),
);
