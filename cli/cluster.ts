/**
 * The cluster a `create` verb works on: the kubeconfig and context its flags name, and a brief
 * check that the API server answers, so that a missing kubeconfig, an unknown context or a
 * server that is down is reported within seconds, naming the file, context or server, before
 * anything starts.
 */
import { clusterFromKubeconfig, type KubernetesCluster } from '../shared/adapters/kubernetes-cluster.js';

export async function reachableCluster(values: {
  readonly kubeconfig?: string;
  readonly context?: string;
}): Promise<KubernetesCluster> {
  const cluster = await clusterFromKubeconfig({
    ...(values.kubeconfig !== undefined ? { path: values.kubeconfig } : {}),
    ...(values.context !== undefined ? { context: values.context } : {}),
  });
  await cluster.probe();
  return cluster;
}
