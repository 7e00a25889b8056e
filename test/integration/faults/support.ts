/**
 * What the fault scenarios share: a namespace of plain objects no controller touches (so two
 * backups of it can be compared byte for byte), clients that reach the cluster through a fault
 * proxy, backups and restores whose outcome is returned rather than thrown, and the triggers that
 * start a fault once enough requests went by (mid-run, not before the run starts).
 */
import { readFile } from 'node:fs/promises';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { type LocalRestoreOptions, runLocalRestore } from '../../../cli/local/restore-runtime.js';
import { KubernetesCluster } from '../../../shared/adapters/kubernetes-cluster.js';
import { ExecutionFailed, type JsonValue } from '../../../shared/adapters/local-state-machine.js';
import type { ObjectStore } from '../../../shared/ports/object-store.js';
import type { ClusterInfo } from '../../env/cluster.js';
import type { FaultProxy } from '../../env/fault-proxy.js';
import type { Outcome } from '../backup/support.js';

/** Retries short enough that a fault outlasting them shows in seconds, not in a quarter minute. */
export const QUICK_RETRIES = { retryDelaysMs: [50, 100, 200] } as const;

/** A kubeconfig of the cluster that reaches it through the proxy (same CA, same token). */
export async function proxiedKubeConfig(cluster: ClusterInfo, proxy: FaultProxy): Promise<KubeConfig> {
  const text = await readFile(cluster.kubeconfig, 'utf8');
  const kc = new KubeConfig();
  kc.loadFromString(text.replace(cluster.server, proxy.url));
  return kc;
}

/** A namespace of `count` ConfigMaps and a few Secrets, created directly (not through a proxy). */
export async function seedNamespace(
  kc: KubeConfig,
  options: { namespace: string; count: number },
): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const { namespace } = options;
  await core.createNamespace({
    body: { metadata: { name: namespace, labels: { 'lifeboat.test/faults': 'yes' } } },
  });
  const creates: Promise<unknown>[] = [];
  for (let i = 0; i < options.count; i++)
    creates.push(
      core.createNamespacedConfigMap({
        namespace,
        body: {
          metadata: { name: `cm-${String(i).padStart(4, '0')}` },
          data: { index: String(i), pad: 'x'.repeat(200) },
        },
      }),
    );
  for (let i = 0; i < 5; i++)
    creates.push(
      core.createNamespacedSecret({
        namespace,
        body: { metadata: { name: `secret-${i}` }, stringData: { password: `not-a-real-password-${i}` } },
      }),
    );
  await Promise.all(creates);
}

/** The names of the ConfigMaps and Secrets a namespace holds, read directly. */
export async function objectsIn(kc: KubeConfig, namespace: string): Promise<string[]> {
  const core = kc.makeApiClient(CoreV1Api);
  const [maps, secrets] = await Promise.all([
    core.listNamespacedConfigMap({ namespace }),
    core.listNamespacedSecret({ namespace }),
  ]);
  return [
    ...maps.items
      .map((m) => `configmaps/${m.metadata?.name}`)
      .filter((n) => n !== 'configmaps/kube-root-ca.crt'),
    ...secrets.items.map((s) => `secrets/${s.metadata?.name}`),
  ].sort();
}

/** Runs `fault` once the proxy has seen `after` requests (matching `method`, when given). */
export function afterRequests(
  proxy: FaultProxy,
  options: { after: number; method?: string; fault: () => void | Promise<void> },
): { readonly fired: boolean } {
  let seen = 0;
  const state = { fired: false };
  proxy.onRequest((req) => {
    if (options.method && req.method !== options.method) return;
    seen++;
    if (seen !== options.after) return;
    state.fired = true;
    void options.fault();
  });
  return state;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Velero's restore request for the run, its outcome returned rather than thrown. */
export async function restore(options: {
  name: string;
  spec: Record<string, unknown>;
  cluster: KubernetesCluster;
  store: ObjectStore;
  extra?: Partial<LocalRestoreOptions>;
}): Promise<Outcome> {
  try {
    const output: JsonValue = await runLocalRestore(
      { cluster: 'target', restore: { metadata: { name: options.name }, spec: options.spec } },
      { cluster: options.cluster, store: options.store, ...options.extra },
    );
    return { ok: true, output };
  } catch (error) {
    if (error instanceof ExecutionFailed) return { ok: false, ...error.failure };
    throw error;
  }
}

/** A cluster client through the proxy, with the given retry schedule (default: the product's). */
export async function clusterThrough(
  cluster: ClusterInfo,
  proxy: FaultProxy,
  retries?: { readonly retryDelaysMs: readonly number[] },
): Promise<KubernetesCluster> {
  return new KubernetesCluster(await proxiedKubeConfig(cluster, proxy), retries ?? {});
}
