/**
 * The Kubernetes cluster as a backup reads it: version, discovery and paginated LIST.
 * Implemented over the real API with @kubernetes/client-node (kubeconfig or EKS token).
 */
import type { ApiResource } from '../domain/api-resources.js';

export interface ServerVersion {
  readonly gitVersion: string;
  readonly major: string;
  readonly minor: string;
}

export interface ListPage {
  /** Objects with `apiVersion` and `kind` set, as the API serves them. */
  readonly items: readonly Record<string, unknown>[];
  readonly continueToken?: string;
}

export interface Cluster {
  serverVersion(options?: { signal?: AbortSignal }): Promise<ServerVersion>;
  /** Every served resource at its group's preferred version, in discovery order. */
  discover(options?: { signal?: AbortSignal }): Promise<ApiResource[]>;
  /** One page; throws ListExpired when the continue token has expired (410 Gone). */
  listPage(options: {
    resource: ApiResource;
    namespace?: string;
    labelSelector?: string;
    limit: number;
    continueToken?: string;
    signal?: AbortSignal;
  }): Promise<ListPage>;
}
