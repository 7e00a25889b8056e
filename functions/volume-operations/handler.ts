/** Lambda entry of VolumeOperations. */
import { backupRun } from '../../shared/contracts/backup-run.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, csiSnapshotsOf, snapshotter, store } from '../wiring.js';
import { volumeOperations } from './volume-operations.js';

export const handler = lambdaHandler('VolumeOperations', async (event: { run?: unknown }, signal) =>
  volumeOperations(
    { run: backupRun.parse(event.run) },
    { store, clock, snapshotter: snapshotter(), csiFor: csiSnapshotsOf, signal },
  ),
);
