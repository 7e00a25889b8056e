/**
 * The Cluster port over the Kubernetes API, authenticated by a @kubernetes/client-node
 * KubeConfig (a kubeconfig file locally, an EKS token in Lambda). Discovery and LIST go through
 * raw GETs so that any resource, built-in or custom, is read the same way; 429, 5xx and
 * connection failures are retried with backoff (messages name the server), 410 Gone becomes
 * ListExpired. `probe` checks briefly that the server answers, before a command starts.
 */
import { request } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { LifeboatError, ListExpired, ResourceGone, RetryableError } from '../domain/errors.js';
import { type ApiResource, apiVersionOf } from '../domain/kubernetes/api-resources.js';
import type {
  Cluster,
  ClusterWriter,
  Discovery,
  ListPage,
  ServerVersion,
  WriteOutcome,
} from '../ports/cluster.js';
import { KubeconfigProblem } from './errors.js';
import { loadKubeConfig } from './kubeconfig.js';
import { KubeconfigCredentials } from './kubernetes-credentials.js';
import { collectionPath, messageOf, objectName } from './kubernetes-paths.js';
import { probeServer } from './kubernetes-reachability.js';

interface ApiResponse {
  readonly status: number;
  readonly body: string;
}

const RETRY_DELAYS_MS = [100, 300, 1000, 2000, 4000, 8000];
const REQUEST_TIMEOUT_MS = 60_000;

export class KubernetesCluster implements Cluster, ClusterWriter {
  private readonly kc: KubeConfig;
  /** Connections are kept alive: a TLS handshake per request would dominate small LISTs. */
  private readonly credentials: KubeconfigCredentials;

  private readonly retryDelaysMs: readonly number[];

  /** `retryDelaysMs`: the waits between tries of a throttled or failed request (default ~15 s in all). */
  constructor(kc: KubeConfig, options: { readonly retryDelaysMs?: readonly number[] } = {}) {
    this.kc = kc;
    this.credentials = new KubeconfigCredentials(kc, { keepAlive: true, maxSockets: 16 });
    this.retryDelaysMs = options.retryDelaysMs ?? RETRY_DELAYS_MS;
  }

  /** The credentials this cluster is reached with, for the other adapters of the same cluster (pod exec). */
  get kubeConfig(): KubeConfig {
    return this.kc;
  }

  /** The API server's address, as the kubeconfig's current cluster gives it. */
  get server(): string {
    const server = this.kc.getCurrentCluster()?.server;
    if (!server) throw new KubeconfigProblem('the kubeconfig has no current cluster');
    return server;
  }

  /** The request's TLS and credentials; a kubeconfig that cannot give them is no transient failure. */
  private async authenticated(requestOptions: import('node:https').RequestOptions): Promise<void> {
    try {
      await this.credentials.apply(requestOptions);
    } catch (error) {
      throw new KubeconfigProblem(
        `the credentials of context "${this.kc.getCurrentContext()}" for ${this.server}: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }

  private async rawRequest(options: {
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
    path: string;
    body?: unknown;
    contentType?: string;
    signal?: AbortSignal;
    timeoutMs?: number;
  }): Promise<ApiResponse> {
    const url = new URL(options.path, this.server);
    const data = options.body === undefined ? undefined : JSON.stringify(options.body);
    const headers: Record<string, string | number> = { Accept: 'application/json' };
    if (data !== undefined) {
      headers['Content-Type'] = options.contentType ?? 'application/json';
      headers['Content-Length'] = Buffer.byteLength(data);
    }
    const requestOptions: import('node:https').RequestOptions = { method: options.method, headers };
    await this.authenticated(requestOptions);
    const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
    return new Promise((resolve, reject) => {
      const req = request(url, { ...requestOptions, signal: options.signal }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      });
      req.on('error', reject);
      // A stalled connection fails (and is retried) instead of hanging the step.
      req.setTimeout(timeoutMs, () =>
        req.destroy(Object.assign(new Error(`no answer in ${timeoutMs / 1000} s`), { code: 'ETIMEDOUT' })),
      );
      req.end(data);
    });
  }

  /** A request retried on throttling, server errors and connection failures, with backoff. */
  private async withRetries(options: Parameters<KubernetesCluster['rawRequest']>[0]): Promise<ApiResponse> {
    let lastError: unknown;
    for (let attempt = 0; attempt <= this.retryDelaysMs.length; attempt++) {
      try {
        const res = await this.rawRequest(options);
        if (res.status !== 429 && res.status < 500) return res;
        lastError = new RetryableError(`${options.method} ${this.server}${options.path}: HTTP ${res.status}`);
      } catch (error) {
        if (options.signal?.aborted || error instanceof KubeconfigProblem) throw error;
        lastError = new RetryableError(
          `${options.method} ${this.server}${options.path}: ${(error as Error).message}`,
          { cause: error },
        );
      }
      const delay = this.retryDelaysMs[attempt];
      if (delay === undefined) break;
      await new Promise((r) => setTimeout(r, delay * (0.5 + Math.random())));
    }
    throw lastError;
  }

  private get(path: string, signal?: AbortSignal): Promise<ApiResponse> {
    return this.withRetries({ method: 'GET', path, ...(signal ? { signal } : {}) });
  }

  private write(options: Parameters<KubernetesCluster['rawRequest']>[0]): Promise<ApiResponse> {
    return this.withRetries(options);
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

  /**
   * The server's version, asked for a few seconds at most (kubernetes-reachability.ts): a
   * command checks its cluster this way before it starts, instead of finding out after a run's
   * minutes of retries that the server is down or refuses it.
   */
  async probe(options: { withinMs?: number; signal?: AbortSignal } = {}): Promise<ServerVersion> {
    const body = await probeServer({
      server: this.server,
      context: this.kc.getCurrentContext(),
      ...(options.withinMs !== undefined ? { withinMs: options.withinMs } : {}),
      ask: (timeoutMs) =>
        this.rawRequest({
          method: 'GET',
          path: '/version',
          timeoutMs,
          ...(options.signal ? { signal: options.signal } : {}),
        }).catch((error: unknown) => {
          if (error instanceof KubeconfigProblem || options.signal?.aborted) throw error;
          return { error };
        }),
    });
    return JSON.parse(body) as ServerVersion;
  }

  async discover(options?: { signal?: AbortSignal }): Promise<Discovery> {
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
    // A group that vanished while we looked (its CRD deleted, 404) is simply gone; one that
    // cannot be read after retries (an aggregated API down) is reported as unavailable.
    const unavailable: string[] = [];
    const perGroup = await Promise.all(
      groups.groups.map(async (g) => {
        const path = `/apis/${g.name}/${g.preferredVersion.version}`;
        const res = await this.get(path, options?.signal).catch(() => undefined);
        if (res?.status === 404) return [];
        if (res?.status !== 200) {
          unavailable.push(`${g.name}/${g.preferredVersion.version}`);
          return [];
        }
        return toResources(g.name, g.preferredVersion.version, JSON.parse(res.body) as ResourceList);
      }),
    );
    return {
      resources: [...toResources('', 'v1', core), ...perGroup.flat()],
      unavailable: unavailable.sort(),
    };
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
    if (res.status === 404) throw new ResourceGone(resource.resource);
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

  async create(options: {
    resource: string;
    object: Record<string, unknown>;
    signal?: AbortSignal;
  }): Promise<WriteOutcome> {
    const path = collectionPath(options.resource, options.object);
    const res = await this.write({
      method: 'POST',
      path,
      body: options.object,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (res.status === 201 || res.status === 200)
      return { result: 'created', created: JSON.parse(res.body) as Record<string, unknown> };
    if (res.status === 409) {
      const existing = await this.get(
        `${path}/${encodeURIComponent(objectName(options.object))}`,
        options.signal,
      );
      if (existing.status === 200)
        return { result: 'exists', existing: JSON.parse(existing.body) as Record<string, unknown> };
    }
    throw new LifeboatError(
      `creating ${options.resource} ${objectName(options.object)}: HTTP ${res.status}: ${messageOf(res.body)}`,
    );
  }

  async read(options: {
    resource: string;
    object: Record<string, unknown>;
    signal?: AbortSignal;
  }): Promise<Record<string, unknown> | undefined> {
    const path = `${collectionPath(options.resource, options.object)}/${encodeURIComponent(objectName(options.object))}`;
    const res = await this.get(path, options.signal);
    if (res.status === 404) return undefined;
    if (res.status !== 200)
      throw new LifeboatError(
        `reading ${options.resource} ${objectName(options.object)}: HTTP ${res.status}: ${messageOf(res.body)}`,
      );
    return JSON.parse(res.body) as Record<string, unknown>;
  }

  async delete(options: {
    resource: string;
    object: Record<string, unknown>;
    signal?: AbortSignal;
  }): Promise<boolean> {
    const path = `${collectionPath(options.resource, options.object)}/${encodeURIComponent(objectName(options.object))}`;
    const res = await this.write({
      method: 'DELETE',
      path,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (res.status === 404) return false;
    if (res.status !== 200 && res.status !== 202)
      throw new LifeboatError(
        `deleting ${options.resource} ${objectName(options.object)}: HTTP ${res.status}: ${messageOf(res.body)}`,
      );
    return true;
  }

  async mergePatch(options: {
    resource: string;
    object: Record<string, unknown>;
    patch: Record<string, unknown>;
    signal?: AbortSignal;
  }): Promise<void> {
    const path = `${collectionPath(options.resource, options.object)}/${encodeURIComponent(objectName(options.object))}`;
    const res = await this.write({
      method: 'PATCH',
      path,
      body: options.patch,
      contentType: 'application/merge-patch+json',
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (res.status !== 200)
      throw new LifeboatError(
        `patching ${options.resource} ${objectName(options.object)}: HTTP ${res.status}: ${messageOf(res.body)}`,
      );
  }

  async replaceStatus(options: {
    resource: string;
    object: Record<string, unknown>;
    status: unknown;
    resourceVersion: string;
    signal?: AbortSignal;
  }): Promise<void> {
    const path = `${collectionPath(options.resource, options.object)}/${encodeURIComponent(objectName(options.object))}`;
    let resourceVersion = options.resourceVersion;
    // client-go's retry.DefaultRetry, as Velero's RetryOnConflict around UpdateStatus: 5 tries.
    for (let attempt = 1; ; attempt++) {
      const metadata = { ...((options.object.metadata ?? {}) as Record<string, unknown>), resourceVersion };
      const res = await this.write({
        method: 'PUT',
        path: `${path}/status`,
        body: { ...options.object, metadata, status: options.status },
        ...(options.signal ? { signal: options.signal } : {}),
      });
      if (res.status === 200 || res.status === 201) return;
      if (res.status !== 409 || attempt >= 5)
        throw new LifeboatError(
          `writing the status of ${options.resource} ${objectName(options.object)}: HTTP ${res.status}: ${messageOf(res.body)}`,
        );
      const current = await this.get(path, options.signal);
      if (current.status === 200) {
        const meta = (JSON.parse(current.body) as { metadata?: { resourceVersion?: string } }).metadata;
        resourceVersion = meta?.resourceVersion ?? resourceVersion;
      }
    }
  }

  async waitForCrd(options: { name: string; timeoutMs: number; signal?: AbortSignal }): Promise<void> {
    const deadline = Date.now() + options.timeoutMs;
    const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${encodeURIComponent(options.name)}`;
    while (Date.now() < deadline) {
      const res = await this.get(path, options.signal);
      if (res.status === 200) {
        const conditions =
          (JSON.parse(res.body) as { status?: { conditions?: { type: string; status: string }[] } }).status
            ?.conditions ?? [];
        const holds = (type: string) => conditions.some((c) => c.type === type && c.status === 'True');
        if (holds('Established') && holds('NamesAccepted')) return;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new RetryableError(
      `the CRD ${options.name} was not established within ${options.timeoutMs / 1000} s`,
    );
  }
}

/**
 * A cluster reached through a kubeconfig file (default: as kubectl finds one: $KUBECONFIG, then
 * ~/.kube/config), or a kubeconfig's text (`text`, as `kubeConfig.exportConfig()` gives it), and
 * context; a missing file or unknown context is a KubeconfigProblem naming it (kubeconfig.ts).
 */
export async function clusterFromKubeconfig(options: {
  path?: string;
  text?: string;
  context?: string;
}): Promise<KubernetesCluster> {
  return new KubernetesCluster(await loadKubeConfig(options));
}
