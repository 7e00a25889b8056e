/** Lambda entry of FinalizeBackup (its writes under backups/ retained when the bucket has Object Lock). */
import { backupRun } from '../../shared/contracts/backup-run.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { retainingBackups } from '../common/retention.js';
import { clock, env, store } from '../common/wiring.js';
import { finalizeBackup } from './finalize-backup.js';

export const handler = lambdaHandler('FinalizeBackup', async (event: { run?: unknown }, signal) => {
  const run = backupRun.parse(event.run);
  const mode = env.LIFEBOAT_OBJECT_LOCK_MODE;
  const retention = mode ? { mode, until: new Date(run.expiration) } : undefined;
  return finalizeBackup({ run }, { store: retainingBackups(store, retention), clock, signal });
});
