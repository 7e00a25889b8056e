/**
 * Listing what a backup selects, for CollectItems: every resource the filters let through, in
 * collection order, page by page, the first pages of the next few requested ahead. An item of a
 * resource that never relates to others is sent in a block of its own as soon as its page is
 * read; the others are held for block building, and unselected items of kinds a selected item
 * may pull in are kept as candidates. This is the backup's hot loop: per item it does only what
 * it must (no extra allocation, no extra pass), and it never builds ItemBlocks of related items.
 */

import type { BlockItem } from '../../shared/contracts/backup-run.js';
import { factsOf } from '../../shared/domain/backup/item-blocks.js';
import { type BackupPlan, excludedByLabel } from '../../shared/domain/backup/plan.js';
import { ResourceGone } from '../../shared/domain/errors.js';
import {
  type ApiResource,
  collectionOrder,
  groupResource,
} from '../../shared/domain/kubernetes/api-resources.js';
import { shouldInclude } from '../../shared/domain/kubernetes/includes-excludes.js';
import { type ItemRef, itemIdentity } from '../../shared/domain/kubernetes/item-ref.js';
import { itemSelected } from '../../shared/domain/kubernetes/label-selector.js';
import {
  collectsResource,
  excludesRelated,
  type ResourceFilter,
} from '../../shared/domain/kubernetes/resource-filter.js';
import type { ListPage } from '../../shared/ports/cluster.js';
import type { BlockSender } from './block-sender.js';
import type { CollectItemsDeps } from './deps.js';
import type { Held } from './held-items.js';
import { listPages, meta } from './list-all.js';
import type { Note } from './resolve-names.js';

/** Resources whose items relate to others (ItemBlock rules); held until the end of listing. */
const RELATED = new Set([
  'pods',
  'persistentvolumeclaims',
  'persistentvolumes',
  'serviceaccounts',
  'clusterrolebindings.rbac.authorization.k8s.io',
  'clusterroles.rbac.authorization.k8s.io',
]);
const PULLED_IN = [
  'persistentvolumeclaims',
  'persistentvolumes',
  'clusterrolebindings.rbac.authorization.k8s.io',
  'clusterroles.rbac.authorization.k8s.io',
];

const CRD_RESOURCE = 'customresourcedefinitions.apiextensions.k8s.io';

// Most resource types hold few objects: the first pages of the next few are fetched ahead,
// so their round trips overlap; memory stays bounded by the window.
const PREFETCH = 8;

/** What the backup selects, its resource names resolved through discovery. */
export interface Selection {
  readonly filter: ResourceFilter;
  /** orderedResources by group-resource. */
  readonly ordered: Record<string, readonly string[]>;
  /** The label selector as a LIST query, if the backup has one. */
  readonly selectorQuery: string | undefined;
}

/** What listing leaves for after it, besides the blocks it sent already. */
export interface Listed {
  /** Selected items of related kinds (and orderedResources), for block building. */
  readonly held: Held[];
  /** Unselected items of kinds a selected item may pull in, by identity. */
  readonly pullCandidates: Map<string, Held[]>;
  /** CRDs backed up as selected items. */
  readonly emittedCrds: Set<string>;
  readonly namespacesWithItems: Set<string>;
  /** Group-resources of the backed-up items of non-core groups. */
  readonly customGroupResources: Set<string>;
}

/** One resource to list, and why. */
interface ListTarget {
  readonly resource: ApiResource;
  readonly gr: string;
  /** Its items may be selected on their own. */
  readonly direct: boolean;
  /** Its items may be pulled in by a selected item. */
  readonly pullable: boolean;
  /** A selected item leaves at once, in a block of its own. */
  readonly streamable: boolean;
}

interface ListingContext {
  readonly deps: CollectItemsDeps;
  readonly plan: BackupPlan;
  readonly pageSize: number;
  readonly selectorQuery: string | undefined;
  readonly sender: BlockSender;
  readonly listed: Listed;
  readonly note: Note;
}

/** Lists every resource the selection lets through, in collection order. */
export async function listSelected(options: {
  deps: CollectItemsDeps;
  plan: BackupPlan;
  selection: Selection;
  discovered: readonly ApiResource[];
  sender: BlockSender;
  note: Note;
}): Promise<Listed> {
  const { deps, plan, selection } = options;
  const listed: Listed = {
    held: [],
    pullCandidates: new Map(),
    emittedCrds: new Set(),
    namespacesWithItems: new Set(),
    customGroupResources: new Set(),
  };
  const context: ListingContext = {
    deps,
    plan,
    pageSize: deps.pageSize ?? 500,
    selectorQuery: selection.selectorQuery,
    sender: options.sender,
    listed,
    note: options.note,
  };
  const targets = listTargets({ order: collectionOrder(options.discovered), plan, selection });
  const firstPageOf = firstPagePrefetcher({ context, targets });
  for (const [index, target] of targets.entries()) {
    await listResource({ context, target, firstPage: firstPageOf(index) });
  }
  return listed;
}

function listTargets(options: {
  order: readonly ApiResource[];
  plan: BackupPlan;
  selection: Selection;
}): ListTarget[] {
  const { filter, ordered } = options.selection;
  return options.order.flatMap((resource) => {
    const gr = groupResource(resource);
    if (gr === 'namespaces') return [];
    const direct = collectsResource({
      filter,
      namespaces: options.plan.namespaces,
      resource: { groupResource: gr, namespaced: resource.namespaced },
    });
    const pullable =
      PULLED_IN.includes(gr) &&
      !excludesRelated({ filter, resource: { groupResource: gr, namespaced: resource.namespaced } });
    if (!direct && !pullable) return [];
    return [
      { resource, gr, direct, pullable, streamable: direct && !RELATED.has(gr) && ordered[gr] === undefined },
    ];
  });
}

/** Kinds that may be pulled in are listed whole: a selected pod's PVC need not match the selector. */
function labelSelectorOf(target: ListTarget, selectorQuery: string | undefined): string | undefined {
  return target.direct && !target.pullable ? selectorQuery : undefined;
}

/**
 * The first page of the target at an index, requested along with those of the next few
 * targets (PREFETCH) when it is asked for.
 */
function firstPagePrefetcher(options: {
  context: ListingContext;
  targets: readonly ListTarget[];
}): (index: number) => Promise<ListPage> | undefined {
  const { deps, pageSize, selectorQuery } = options.context;
  const firstPages: Promise<ListPage>[] = [];
  const prefetch = (i: number): void => {
    const next = options.targets[i];
    if (!next || firstPages[i]) return;
    const labelSelector = labelSelectorOf(next, selectorQuery);
    firstPages[i] = deps.cluster.listPage({
      resource: next.resource,
      limit: pageSize,
      ...(labelSelector ? { labelSelector } : {}),
      ...(deps.signal ? { signal: deps.signal } : {}),
    });
    // Awaited in order below; never an unhandled rejection meanwhile.
    firstPages[i]?.catch(() => undefined);
  };
  return (index) => {
    for (let ahead = index; ahead < index + PREFETCH; ahead++) prefetch(ahead);
    return firstPages[index];
  };
}

/**
 * Lists one resource: each selected item sent or held, each unselected one of a kind that may
 * be pulled in kept as a candidate. The per-item loop stays inline: it is the hot path.
 */
async function listResource(options: {
  context: ListingContext;
  target: ListTarget;
  firstPage: Promise<ListPage> | undefined;
}): Promise<void> {
  const { deps, plan, sender, note } = options.context;
  const { held, pullCandidates, namespacesWithItems, customGroupResources, emittedCrds } =
    options.context.listed;
  const { resource, gr, direct, pullable, streamable } = options.target;
  let count = 0;
  try {
    for await (const page of pagesOf(options))
      for (const object of page) {
        const m = meta(object);
        if (m.deleting || excludedByLabel(m.labels)) continue;
        if (resource.namespaced && !shouldInclude(plan.namespaces, m.namespace)) continue;
        const ref: ItemRef = {
          group: resource.group,
          version: resource.version,
          resource: resource.resource,
          namespace: m.namespace,
          name: m.name,
        };
        const item: BlockItem = { ref, kind: resource.kind, preferred: true, json: JSON.stringify(object) };
        const selected = direct && itemSelected(plan, m.labels);
        if (!selected) {
          if (pullable) {
            const entry = { facts: factsOf(ref, object), item };
            pullCandidates.set(itemIdentity(ref), [entry]);
          }
          continue;
        }
        count++;
        if (m.namespace) namespacesWithItems.add(m.namespace);
        if (resource.group) customGroupResources.add(gr);
        if (gr === CRD_RESOURCE) emittedCrds.add(m.name);
        if (!streamable) held.push({ facts: factsOf(ref, object), item });
        else {
          const sending = sender.addBlock([item]);
          if (sending) await sending;
        }
      }
  } catch (error) {
    // Velero: a resource that cannot be listed (forbidden, gone since discovery) is an error
    // of the backup, which goes on with the others and ends PartiallyFailed.
    if (deps.signal?.aborted) throw error;
    if (error instanceof ResourceGone) {
      // Nothing of it exists any more, so nothing is missing from the backup.
      note('warning', 'Resource no longer served, skipped', { resource: gr });
      return;
    }
    note('error', 'Could not list a resource; its items are not in the backup', {
      resource: gr,
      reason: error instanceof Error ? error.message : String(error),
    });
  }
  if (count > 0) note('info', 'Listed items', { resource: gr, count });
}

/** The target's pages, its first page the one already requested. */
function pagesOf(options: {
  context: ListingContext;
  target: ListTarget;
  firstPage: Promise<ListPage> | undefined;
}): AsyncGenerator<Record<string, unknown>[]> {
  const { deps, pageSize, selectorQuery, note } = options.context;
  const { target } = options;
  return listPages({
    cluster: deps.cluster,
    resource: target.resource,
    pageSize,
    labelSelector: labelSelectorOf(target, selectorQuery),
    signal: deps.signal,
    firstPage: options.firstPage,
    onRestart: () => note('warning', 'list expired, restarting', { resource: target.gr }),
  });
}
