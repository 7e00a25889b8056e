/** Lambda entry of PatchProvisionedVolumes: backed-up reclaim policy and labels on re-provisioned PVs. */
import { restoreRun } from '../../shared/contracts/restore-run.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, clusterNamed, store } from '../wiring.js';
import { patchProvisionedVolumes } from './patch-provisioned-volumes.js';

export const handler = lambdaHandler('PatchProvisionedVolumes', async (event: { run?: unknown }, signal) => {
  const run = restoreRun.parse(event.run);
  return patchProvisionedVolumes({ run }, { store, clock, cluster: await clusterNamed(run.cluster), signal });
});
