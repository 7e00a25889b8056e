/** Lambda entry of RecordBackupDeletion (the delete workflow's last step). */
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, store } from '../common/wiring.js';
import { type DeletionOutcome, recordBackupDeletion } from './record-backup-deletion.js';

export const handler = lambdaHandler('RecordBackupDeletion', async (event: DeletionOutcome) =>
  recordBackupDeletion(event, { store, clock }),
);
