/** Lambda entry of RecordBackupFailure (the state machine's Catch). */
import { backupRun } from '../../shared/contracts/backup-run.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { retainingBackups } from '../common/retention.js';
import { clock, env, store } from '../common/wiring.js';
import { recordBackupFailure } from './record-backup-failure.js';

export const handler = lambdaHandler(
  'RecordBackupFailure',
  async (event: { run?: unknown; failure?: { Error?: string; Cause?: string } }) => {
    const run = backupRun.parse(event.run);
    const mode = env.LIFEBOAT_OBJECT_LOCK_MODE;
    const retention = mode ? { mode, until: new Date(run.expiration) } : undefined;
    return recordBackupFailure(
      { run, failure: event.failure ?? {} },
      { store: retainingBackups(store, retention), clock },
    );
  },
);
