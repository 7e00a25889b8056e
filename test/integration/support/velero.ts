/**
 * The interop tests' Velero: test/env/velero-server.ts against this run's source cluster and
 * moto, on a bucket of its own. One Velero server per host: every test that needs it is in
 * test/integration/interop/velero.test.ts, which starts it once.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { ClusterInfo } from '../../env/cluster.js';
import { ensureVelero, type VeleroTools } from '../../env/ensure-tools.js';
import { startVeleroServer, type VeleroServer } from '../../env/velero-server.js';
import { testEnv, uniqueName } from './env.js';

export interface InteropVelero extends VeleroServer {
  readonly cluster: ClusterInfo;
}

async function veleroTools(): Promise<VeleroTools> {
  // A kept-up environment from before Velero was a tool: build (or find) it now.
  const known = (testEnv().tools as { velero?: VeleroTools }).velero;
  if (known) return known;
  const { stdout } = await promisify(execFile)('go', ['version']);
  return ensureVelero(stdout.trim());
}

export async function startVelero(): Promise<InteropVelero> {
  const env = testEnv();
  const cluster = env.clusters.source;
  const server = await startVeleroServer({
    tools: await veleroTools(),
    kubeconfig: cluster.kubeconfig,
    storage: {
      endpoint: env.aws.endpoint,
      region: env.aws.region,
      bucket: uniqueName('velero'),
      prefix: 'cluster-a',
    },
  });
  return { ...server, cluster };
}
