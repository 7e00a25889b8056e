/**
 * One page of a list: the names in order, from after the `continue` token, each turned into its
 * object and kept when it passes the filters (label selector, phase, cluster), until the page is
 * full. The next page's token is the last name the page holds.
 */
import { continueToken, type ListQuery, type ObjectList } from '../../shared/contracts/api.js';
import { selectorMatches } from '../../shared/domain/kubernetes/label-selector.js';

export interface Listed {
  readonly metadata?: {
    readonly name?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly status?: { readonly phase?: string };
}

export async function page<T extends Listed>(options: {
  readonly kind: string;
  /** Every name, in order, without repeats. */
  readonly names: readonly string[];
  readonly query: ListQuery;
  readonly objectOf: (name: string) => Promise<T | undefined>;
  /** The cluster an object belongs to, for the `cluster` filter. */
  readonly clusterOf: (object: T) => string | undefined;
}): Promise<ObjectList<T>> {
  const { query } = options;
  const names = options.names.filter((n) => query.after === undefined || n > query.after);
  const items: T[] = [];
  let last: string | undefined;
  for (const name of names) {
    if (items.length === query.limit) {
      return {
        apiVersion: 'velero.io/v1',
        kind: options.kind,
        metadata: { continue: continueToken(last ?? name) },
        items,
      };
    }
    last = name;
    const object = await options.objectOf(name);
    if (!object) continue;
    if (query.phase !== undefined && object.status?.phase !== query.phase) continue;
    if (query.cluster !== undefined && options.clusterOf(object) !== query.cluster) continue;
    if (query.selector && !selectorMatches(query.selector, object.metadata?.labels ?? {})) continue;
    items.push(object);
  }
  return { apiVersion: 'velero.io/v1', kind: options.kind, metadata: {}, items };
}

/** Names of several sources merged: sorted, each once. */
export function mergedNames(...lists: readonly (readonly string[])[]): string[] {
  return [...new Set(lists.flat())].sort();
}
