/** Lambda entry of ValidateBackup. */
import { validateBackupInput } from '../../shared/contracts/backup-run.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, clusterNamed, env, store } from '../common/wiring.js';
import { validateBackup } from './validate-backup.js';

export const handler = lambdaHandler('ValidateBackup', async (event: unknown, signal) => {
  const input = validateBackupInput.parse(event);
  return validateBackup(input, {
    store,
    clock,
    itemBlocksTimeoutSeconds: env.ITEM_BLOCKS_TIMEOUT_SECONDS,
    clusterNamed,
    signal,
  });
});
