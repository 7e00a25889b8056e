/**
 * The Kubernetes cluster as a backup reads it: version, discovery and paginated LIST.
 * Implemented over the real API with @kubernetes/client-node (kubeconfig or EKS token).
 */
import type { ApiResource } from '../domain/kubernetes/api-resources.js';

export interface ServerVersion {
  readonly gitVersion: string;
  readonly major: string;
  readonly minor: string;
}

export interface Discovery {
  readonly resources: ApiResource[];
  readonly unavailable: readonly string[];
}

export interface ListPage {
  /** Objects with `apiVersion` and `kind` set, as the API serves them. */
  readonly items: readonly Record<string, unknown>[];
  readonly continueToken?: string;
}

export interface Cluster {
  serverVersion(options?: { signal?: AbortSignal }): Promise<ServerVersion>;
  /**
   * Every served resource at its group's preferred version, in discovery order, and the groups
   * that could not be read (an aggregated API down): a backup reports those, never hides them.
   */
  discover(options?: { signal?: AbortSignal }): Promise<Discovery>;
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

export type WriteOutcome =
  | { readonly result: 'created'; readonly created: Record<string, unknown> }
  | { readonly result: 'exists'; readonly existing: Record<string, unknown> };

/** Writing objects into a cluster, as a restore does. */
export interface ClusterWriter {
  /** Creates the object at `<group>/<version>` `<resource>`; an existing one is returned, not replaced. */
  create(options: {
    resource: string;
    object: Record<string, unknown>;
    signal?: AbortSignal;
  }): Promise<WriteOutcome>;
  /** The object as the cluster has it now, or undefined. */
  read(options: {
    resource: string;
    object: Record<string, unknown>;
    signal?: AbortSignal;
  }): Promise<Record<string, unknown> | undefined>;
  /** Deletes the object; false when it was not there. */
  delete(options: {
    resource: string;
    object: Record<string, unknown>;
    signal?: AbortSignal;
  }): Promise<boolean>;
  /** JSON merge patch of an existing object. */
  mergePatch(options: {
    resource: string;
    object: Record<string, unknown>;
    patch: Record<string, unknown>;
    signal?: AbortSignal;
  }): Promise<void>;
  /**
   * Writes `status` through the object's status subresource (PUT …/status), as Velero's
   * UpdateStatus after a create: sent with `resourceVersion`, and on a conflict again with the
   * object's current one. Throws when the resource has no status subresource (404) or the write
   * is refused.
   */
  replaceStatus(options: {
    resource: string;
    object: Record<string, unknown>;
    status: unknown;
    resourceVersion: string;
    signal?: AbortSignal;
  }): Promise<void>;
  /** Waits until a CRD is Established and NamesAccepted, or the timeout passes (then throws). */
  waitForCrd(options: { name: string; timeoutMs: number; signal?: AbortSignal }): Promise<void>;
}
