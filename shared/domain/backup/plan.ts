/**
 * What a backup run needs to know of its request, normalized: filters with Velero's defaults
 * applied, the TTL resolved to an expiration. Resource names are still as the user wrote them;
 * CollectItems resolves them through discovery.
 */
import type { IncludesExcludes } from '../kubernetes/includes-excludes.js';
import type { LabelSelector } from '../kubernetes/label-selector.js';
import type { ResourceFilter } from '../kubernetes/resource-filter.js';

/** Velero's default `--default-backup-ttl`. */
export const DEFAULT_TTL_MS = 720 * 3_600_000;

/** The resource filter as the user wrote it; CollectItems resolves its names through discovery. */
export type UnresolvedResourceFilter = ResourceFilter;

export interface BackupPlan {
  readonly name: string;
  readonly cluster: string;
  readonly namespaces: IncludesExcludes;
  readonly resourceFilter: UnresolvedResourceFilter;
  readonly labelSelector?: LabelSelector;
  readonly orLabelSelectors?: readonly LabelSelector[];
  /** Resource name as written → ordered `ns/name` list. */
  readonly orderedResources: Readonly<Record<string, readonly string[]>>;
  readonly ttlMs: number;
}

/** The label that keeps an object out of every backup (Velero). */
export const EXCLUDE_LABEL = 'velero.io/exclude-from-backup';

export function excludedByLabel(labels: Readonly<Record<string, string>> | undefined): boolean {
  return labels?.[EXCLUDE_LABEL] === 'true';
}
