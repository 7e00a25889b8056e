/**
 * The clusters `lifeboat server --local` serves, by the names requests give: each `--clusters`
 * entry (`NAME=FILE[#CONTEXT]`), or every context of the kubeconfig by its own name. Each is
 * reached only when a request needs it.
 */
import { loadKubeConfig } from '../../shared/adapters/kubeconfig.js';
import { clusterFromKubeconfig, type KubernetesCluster } from '../../shared/adapters/kubernetes-cluster.js';
import { UsageError } from '../flags.js';

export interface ServedCluster {
  readonly path?: string;
  readonly context?: string;
}

/** `a=/x#ctx,b=/y` → { a: {path: /x, context: ctx}, b: {path: /y} }; mistakes name the flag. */
export function parseClusters(text: string): Map<string, ServedCluster> {
  const served = new Map<string, ServedCluster>();
  for (const entry of text
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const match = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?)=([^#]+)(?:#(.+))?$/.exec(entry);
    if (!match) throw new UsageError(`--clusters: "${entry}" is not NAME=FILE[#CONTEXT]`);
    const [, name = '', , path, context] = match;
    if (served.has(name)) throw new UsageError(`--clusters: "${name}" is named twice`);
    served.set(name, { ...(path ? { path } : {}), ...(context ? { context } : {}) });
  }
  if (served.size === 0) throw new UsageError('--clusters names no cluster');
  return served;
}

/** Every context of a kubeconfig, as a cluster by the context's name. */
export async function contextsOf(path: string | undefined): Promise<Map<string, ServedCluster>> {
  const kc = await loadKubeConfig(path !== undefined ? { path } : {});
  return new Map(kc.getContexts().map((c) => [c.name, { ...(path ? { path } : {}), context: c.name }]));
}

/** The cluster of a request's name, reached through its kubeconfig; unknown names are refused by the API. */
export function clusterReacher(
  served: ReadonlyMap<string, ServedCluster>,
): (name: string) => Promise<KubernetesCluster> {
  return async (name) => {
    const cluster = served.get(name);
    if (!cluster) throw new UsageError(`the server serves no cluster "${name}"`);
    return clusterFromKubeconfig({ ...cluster });
  };
}
