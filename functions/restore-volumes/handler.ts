/**
 * Lambda entry of RestoreVolumes: re-creates native snapshot volumes before the phases (where
 * the request sends them: snapshotterAt), and hands moved volumes to the data mover.
 */

import { ebsSnapshotterAt } from '../../shared/adapters/ebs-volume-places.js';
import { volumeOperationsInput } from '../../shared/contracts/backup-volumes.js';
import { restoreRun } from '../../shared/contracts/restore-run.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, dataMoverRestoreRepository, env, renewRun, snapshotter, store } from '../common/wiring.js';
import { restoreVolumes } from './restore-volumes.js';

const repository = dataMoverRestoreRepository();
const snapshotterAt = ebsSnapshotterAt({ defaultRegion: env.AWS_REGION });

export const handler = lambdaHandler('RestoreVolumes', async (event: unknown, signal) => {
  // The same shape as VolumeOperations': the run, and the data-mover jobs the last Map ran.
  const input = volumeOperationsInput.parse(event);
  const run = restoreRun.parse(input.run);
  await renewRun('restore', run, signal);
  return restoreVolumes(
    { run, ...(input.moved ? { moved: input.moved } : {}) },
    {
      store,
      clock,
      snapshotter: snapshotter(),
      snapshotterAt,
      ...(repository ? { dataMover: { ...repository, region: env.AWS_REGION } } : {}),
      signal,
    },
  );
});
