/**
 * Lambda entry of PatchProvisionedVolumes: backed-up reclaim policy and labels on re-provisioned
 * PVs, and the file restores of fs-backup volumes (which the data mover on Fargate cannot reach:
 * they are warned about).
 */
import { volumeOperationsInput } from '../../shared/contracts/backup-volumes.js';
import { restoreRun } from '../../shared/contracts/restore-run.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, clusterNamed, dataMoverRestoreRepository, renewRun, store } from '../common/wiring.js';
import { patchProvisionedVolumes } from './patch-provisioned-volumes.js';

const repository = dataMoverRestoreRepository();

export const handler = lambdaHandler('PatchProvisionedVolumes', async (event: unknown, signal) => {
  const input = volumeOperationsInput.parse(event);
  const run = restoreRun.parse(input.run);
  await renewRun('restore', run, signal);
  return patchProvisionedVolumes(
    { run, ...(input.moved ? { moved: input.moved } : {}) },
    {
      store,
      clock,
      cluster: await clusterNamed(run.cluster),
      ...(repository ? { dataMover: repository } : {}),
      signal,
    },
  );
});
