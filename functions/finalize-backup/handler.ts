/** Lambda entry of FinalizeBackup. */
import { backupRun } from '../../shared/contracts/backup-run.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, store } from '../common/wiring.js';
import { finalizeBackup } from './finalize-backup.js';

export const handler = lambdaHandler('FinalizeBackup', async (event: { run?: unknown }, signal) =>
  finalizeBackup({ run: backupRun.parse(event.run) }, { store, clock, signal }),
);
