/**
 * What a drill's item check leaves for the steps after it (its mismatches and the workloads to
 * wait on, in the drill's working data), and how those steps address an item in the target
 * cluster: its resource by API group and kind, as the target's discovery serves it.
 */
import type { Readiness } from '../../shared/domain/drills/expected-items.js';
import type { DrillMismatch } from '../../shared/domain/drills/report.js';
import type { ApiResource } from '../../shared/domain/kubernetes/api-resources.js';

export interface WaitedOnItem {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly readiness: Readiness;
  /** Its plural resource in the target cluster (found by the item check's discovery). */
  readonly resource: string;
}

export interface DrillItemFindings {
  readonly checked: number;
  readonly notChecked: number;
  readonly mismatches: readonly DrillMismatch[];
  readonly waitOn: readonly WaitedOnItem[];
}

/** The workloads still not ready when the wait ended (or none), and when all were. */
export interface DrillReadiness {
  readonly readyAt?: string;
  readonly pending: readonly DrillMismatch[];
}

/** `group/Kind` → plural resource, from the target's discovery (subresources, such as `namespaces/status`, left out). */
export function resourcesOf(resources: readonly ApiResource[]): Map<string, string> {
  const byKind = new Map<string, string>();
  for (const r of resources) {
    const key = `${r.group}/${r.kind}`;
    if (!r.resource.includes('/') && !byKind.has(key)) byKind.set(key, r.resource);
  }
  return byKind;
}

export function resourceOf(
  resources: ReadonlyMap<string, string>,
  item: { readonly apiVersion: string; readonly kind: string },
): string | undefined {
  const group = item.apiVersion.includes('/') ? (item.apiVersion.split('/')[0] ?? '') : '';
  return resources.get(`${group}/${item.kind}`);
}

/** Enough of an object for the cluster port to address it. */
export function stub(item: {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}): Record<string, unknown> {
  return {
    apiVersion: item.apiVersion,
    kind: item.kind,
    metadata: { name: item.name, ...(item.namespace ? { namespace: item.namespace } : {}) },
  };
}
