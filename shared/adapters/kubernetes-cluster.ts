/**
 * The Cluster port over the Kubernetes API, authenticated by a @kubernetes/client-node
 * KubeConfig (a kubeconfig file locally, an EKS token in Lambda). Discovery and LIST go through
 * raw GETs so that any resource, built-in or custom, is read the same way; 429 and 5xx are
 * retried with backoff, 410 Gone becomes ListExpired.
 */
import { Agent, request } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { type ApiResource, apiVersionOf } from '../domain/api-resources.js';
import { LifeboatError, ListExpired, RetryableError } from '../domain/errors.js';
import type { Cluster, ListPage, ServerVersion } from '../ports/cluster.js';

interface ApiResponse {
  readonly status: number;
  readonly body: string;
}

const RETRY_DELAYS_MS = [100, 300, 1000, 2000, 4000, 8000];

export class KubernetesCluster implements Cluster {
  private readonly kc: KubeConfig;
  /** Connections are kept alive: a TLS handshake per request would dominate small LISTs. */
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 16 });

  constructor(kc: KubeConfig) {
    this.kc = kc;
  }

  private async rawGet(path: string, signal?: AbortSignal): Promise<ApiResponse> {
    const server = this.kc.getCurrentCluster()?.server;
    if (!server) throw new LifeboatError('the kubeconfig has no current cluster');
    const url = new URL(path, server);
    const options: import('node:https').RequestOptions = {
      method: 'GET',
      headers: { Accept: 'application/json' },
    };
    await this.kc.applyToHTTPSOptions(options);
    return new Promise((resolve, reject) => {
      const req = request(url, { ...options, signal }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
  }

  /** GET with retries of throttling, server errors and connection failures. */
  private async get(path: string, signal?: AbortSignal): Promise<ApiResponse> {
    let lastError: unknown;
    for (let attempt = 0; attempt <= RETRY_DELAYS_MS.length; attempt++) {
      try {
        const res = await this.rawGet(path, signal);
        if (res.status !== 429 && res.status < 500) return res;
        lastError = new RetryableError(`GET ${path}: HTTP ${res.status}`);
      } catch (error) {
        if (signal?.aborted) throw error;
        lastError = new RetryableError(`GET ${path}: ${(error as Error).message}`, { cause: error });
      }
      const delay = RETRY_DELAYS_MS[attempt];
      if (delay === undefined) break;
      await new Promise((r) => setTimeout(r, delay * (0.5 + Math.random())));
    }
    throw lastError;
  }

  private async getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
    const res = await this.get(path, signal);
    if (res.status !== 200)
      throw new LifeboatError(`GET ${path}: HTTP ${res.status}: ${res.body.slice(0, 300)}`);
    return JSON.parse(res.body) as T;
  }

  async serverVersion(options?: { signal?: AbortSignal }): Promise<ServerVersion> {
    return this.getJson<ServerVersion>('/version', options?.signal);
  }

  async discover(options?: { signal?: AbortSignal }): Promise<ApiResource[]> {
    interface ResourceList {
      resources: {
        name: string;
        kind: string;
        singularName?: string;
        shortNames?: string[];
        namespaced: boolean;
        verbs: string[];
      }[];
    }
    interface GroupList {
      groups: { name: string; preferredVersion: { version: string } }[];
    }
    const toResources = (group: string, version: string, list: ResourceList): ApiResource[] =>
      list.resources.map((r) => ({
        group,
        version,
        resource: r.name,
        kind: r.kind,
        ...(r.singularName ? { singular: r.singularName } : {}),
        shortNames: r.shortNames ?? [],
        namespaced: r.namespaced,
        verbs: r.verbs,
      }));
    const core = await this.getJson<ResourceList>('/api/v1', options?.signal);
    const groups = await this.getJson<GroupList>('/apis', options?.signal);
    // A group can vanish while we look (a CRD deleted), or an aggregated API be down: such a
    // group is left out rather than failing the whole discovery.
    const perGroup = await Promise.all(
      groups.groups.map(async (g) => {
        const res = await this.rawGet(`/apis/${g.name}/${g.preferredVersion.version}`, options?.signal).catch(
          () => undefined,
        );
        if (res?.status !== 200) return [];
        return toResources(g.name, g.preferredVersion.version, JSON.parse(res.body) as ResourceList);
      }),
    );
    return [...toResources('', 'v1', core), ...perGroup.flat()];
  }

  async listPage(options: {
    resource: ApiResource;
    namespace?: string;
    labelSelector?: string;
    limit: number;
    continueToken?: string;
    signal?: AbortSignal;
  }): Promise<ListPage> {
    const { resource } = options;
    const base = resource.group ? `/apis/${resource.group}/${resource.version}` : `/api/${resource.version}`;
    const scope = options.namespace ? `/namespaces/${encodeURIComponent(options.namespace)}` : '';
    const query = new URLSearchParams({ limit: String(options.limit) });
    if (options.continueToken) query.set('continue', options.continueToken);
    if (options.labelSelector) query.set('labelSelector', options.labelSelector);
    const path = `${base}${scope}/${resource.resource}?${query}`;
    const res = await this.get(path, options.signal);
    if (res.status === 410) throw new ListExpired(resource.resource);
    if (res.status !== 200)
      throw new LifeboatError(`LIST ${path}: HTTP ${res.status}: ${res.body.slice(0, 300)}`);
    const list = JSON.parse(res.body) as {
      items?: Record<string, unknown>[];
      metadata?: { continue?: string };
    };
    const apiVersion = apiVersionOf(resource);
    // Items of a LIST carry no apiVersion/kind; a backed-up object needs both.
    const items = (list.items ?? []).map((item) => ({ apiVersion, kind: resource.kind, ...item }));
    const next = list.metadata?.continue;
    return next ? { items, continueToken: next } : { items };
  }
}

/** A cluster reached through a kubeconfig file (default: $KUBECONFIG or ~/.kube/config) and context. */
export async function clusterFromKubeconfig(options: {
  path?: string;
  context?: string;
}): Promise<KubernetesCluster> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  if (options.path) kc.loadFromFile(options.path);
  else kc.loadFromDefault();
  if (options.context) kc.setCurrentContext(options.context);
  if (!kc.getCurrentCluster())
    throw new LifeboatError('no Kubernetes cluster found in the kubeconfig (use --kubeconfig or --context)');
  return new KubernetesCluster(kc);
}
