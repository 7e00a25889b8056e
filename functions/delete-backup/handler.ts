/** Lambda entry of DeleteBackup (the delete workflow's step that deletes). */
import * as z from 'zod';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, dataMoverRepository, snapshotter, store } from '../common/wiring.js';
import { deleteBackupStep } from './deletion-step.js';

const input = z.object({
  name: z.string().min(1),
  attempt: z.number().int().positive(),
  runId: z.string().min(1),
});

export const handler = lambdaHandler('DeleteBackup', async (event: unknown, signal) => {
  const repository = dataMoverRepository();
  return deleteBackupStep(input.parse(event), {
    store,
    clock,
    snapshotter: snapshotter(),
    ...(repository ? { repository } : {}),
    signal,
  });
});
