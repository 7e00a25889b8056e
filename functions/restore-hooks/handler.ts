/** Lambda entry of RestoreHooks: exec hooks run through the apiserver with the cluster's EKS token. */
import { KubernetesPodExec } from '../../shared/adapters/kubernetes-pod-exec.js';
import { restoreRun } from '../../shared/contracts/restore-run.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, clusterNamed, renewRun, store } from '../common/wiring.js';
import { restoreHooks } from './restore-hooks.js';

export const handler = lambdaHandler('RestoreHooks', async (event: { run?: unknown }, signal) => {
  const run = restoreRun.parse(event.run);
  await renewRun('restore', run, signal);
  const cluster = await clusterNamed(run.cluster);
  const podExec = new KubernetesPodExec(cluster.kubeConfig);
  return restoreHooks({ run }, { store, cluster, podExec, clock, signal });
});
