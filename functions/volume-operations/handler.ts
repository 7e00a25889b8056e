/** Lambda entry of VolumeOperations. */
import { EbsSnapshotCopies } from '../../shared/adapters/ebs-snapshot-copies.js';
import { backupRun } from '../../shared/contracts/backup-run.js';
import { volumeOperationsInput } from '../../shared/contracts/backup-volumes.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import {
  clock,
  csiSnapshotsOf,
  dataMoverRepository,
  env,
  renewRun,
  snapshotter,
  store,
} from '../common/wiring.js';
import { volumeOperations } from './volume-operations.js';

const repository = dataMoverRepository();
// copySnapshots: shares and copies from this account and region, into each target through its role.
const snapshotCopies = new EbsSnapshotCopies({ sourceRegion: env.AWS_REGION });

export const handler = lambdaHandler('VolumeOperations', async (event: unknown, signal) => {
  const input = volumeOperationsInput.parse(event);
  const run = backupRun.parse(input.run);
  await renewRun('backup', run, signal);
  return volumeOperations(
    { run, ...(input.moved ? { moved: input.moved } : {}) },
    {
      store,
      clock,
      snapshotter: snapshotter(),
      snapshotCopies,
      csiFor: csiSnapshotsOf,
      ...(repository ? { dataMover: { repository, region: env.AWS_REGION } } : {}),
      signal,
    },
  );
});
