/**
 * Paginated LIST of one resource for CollectItems: the first page may already be requested,
 * the next page is requested while the current one is processed, and an expired continue
 * token (410 Gone) restarts the listing without yielding an item twice.
 */

import { ListExpired } from '../../shared/domain/errors.js';
import type { ApiResource } from '../../shared/domain/kubernetes/api-resources.js';
import type { Cluster, ListPage } from '../../shared/ports/cluster.js';

/** Namespace, name, labels and deletion state of a listed object. */
export function meta(object: Record<string, unknown>): {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  deleting: boolean;
} {
  const m = (object.metadata ?? {}) as Record<string, unknown>;
  return {
    name: String(m.name ?? ''),
    namespace: typeof m.namespace === 'string' ? m.namespace : '',
    labels: (m.labels ?? {}) as Record<string, string>,
    deleting: typeof m.deletionTimestamp === 'string',
  };
}

export interface ListAllOptions {
  readonly cluster: Cluster;
  readonly resource: ApiResource;
  readonly pageSize: number;
  readonly labelSelector: string | undefined;
  readonly signal: AbortSignal | undefined;
  /** The first page, already requested. */
  readonly firstPage?: Promise<ListPage> | undefined;
  readonly onRestart: () => void;
}

/** Every object, one by one. */
export async function* listAll(options: ListAllOptions): AsyncGenerator<Record<string, unknown>> {
  for await (const page of listPages(options)) yield* page;
}

/**
 * Every object, a page at a time: the caller goes through a page's objects without an await
 * (a promise) per object.
 */
export async function* listPages(options: ListAllOptions): AsyncGenerator<Record<string, unknown>[]> {
  // A restart after 410 Gone re-lists from the start; items already yielded are skipped. The API
  // lists in storage-key order (`<namespace>/<name>`, byte order; names are ASCII), so the last
  // key yielded is all it takes to know them: memory stays constant, however many items.
  let lastKey: string | undefined;
  let restarts = 0;
  const request = (token: string | undefined): Promise<ListPage> => {
    const pending = options.cluster.listPage({
      resource: options.resource,
      limit: options.pageSize,
      ...(token ? { continueToken: token } : {}),
      ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    pending.catch(() => undefined);
    return pending;
  };
  for (;;) {
    try {
      let next: Promise<ListPage> | undefined =
        (restarts === 0 ? options.firstPage : undefined) ?? request(undefined);
      while (next) {
        const page: ListPage = await next;
        // The next page is on its way while this one is processed: two pages in memory at most.
        next = page.continueToken ? request(page.continueToken) : undefined;
        const fresh: Record<string, unknown>[] = [];
        for (const item of page.items) {
          const m = meta(item);
          const key = m.namespace ? `${m.namespace}/${m.name}` : m.name;
          if (restarts > 0 && lastKey !== undefined && key <= lastKey) continue;
          lastKey = key;
          fresh.push(item);
        }
        if (fresh.length > 0) yield fresh;
      }
      return;
    } catch (error) {
      if (!(error instanceof ListExpired) || restarts >= 3) throw error;
      restarts++;
      options.onRestart();
    }
  }
}
