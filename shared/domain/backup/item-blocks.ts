/**
 * ItemBlocks (seed 000, Velero 1.15+): items that must be backed up together, so that hooks run
 * once around all of them. A block starts at the first item not yet in a block and pulls in
 * related items, recursively, the way Velero's ItemBlockActions do:
 * - a pod → the PVCs it mounts;
 * - a PVC → its PV and every other pod mounting it;
 * - a service account → the ClusterRoleBindings naming it and their ClusterRoles;
 * - consecutive `orderedResources` items of one resource form one block, in the given order;
 * - one object under several API versions is one item.
 * Pure: takes compact facts about each selected item, never whole objects; relations to items
 * that were not selected are ignored, so every selected item lands in exactly one block.
 */
import { groupResource } from '../kubernetes/api-resources.js';
import { type ItemRef, itemIdentity, namespacedName } from '../kubernetes/item-ref.js';

/** What block building needs to know of an item, read from the object by `factsOf`. */
export interface ItemFacts {
  readonly ref: ItemRef;
  /** Pod: names of the PVCs its volumes claim (same namespace). */
  readonly claims?: readonly string[];
  /** PVC: the PV it is bound to. */
  readonly volumeName?: string;
  /** ClusterRoleBinding: the service accounts among its subjects, and its cluster role. */
  readonly serviceAccounts?: readonly { readonly namespace: string; readonly name: string }[];
  readonly clusterRole?: string;
}

export interface ItemBlock {
  readonly items: readonly ItemRef[];
}

/** Reads the facts block building needs from an object as the apiserver returns it. */
export function factsOf(ref: ItemRef, object: unknown): ItemFacts {
  const o = (object ?? {}) as Record<string, unknown>;
  const spec = (o.spec ?? {}) as Record<string, unknown>;
  if (ref.group === '' && ref.resource === 'pods') {
    const volumes = Array.isArray(spec.volumes) ? (spec.volumes as Record<string, unknown>[]) : [];
    const claims = volumes
      .map((v) => (v.persistentVolumeClaim as { claimName?: unknown } | undefined)?.claimName)
      .filter((c): c is string => typeof c === 'string');
    return { ref, claims };
  }
  if (ref.group === '' && ref.resource === 'persistentvolumeclaims') {
    return typeof spec.volumeName === 'string' && spec.volumeName
      ? { ref, volumeName: spec.volumeName }
      : { ref };
  }
  if (ref.group === 'rbac.authorization.k8s.io' && ref.resource === 'clusterrolebindings') {
    const subjects = Array.isArray(o.subjects) ? (o.subjects as Record<string, unknown>[]) : [];
    const serviceAccounts = subjects
      .filter((s) => s.kind === 'ServiceAccount' && typeof s.name === 'string')
      .map((s) => ({ namespace: typeof s.namespace === 'string' ? s.namespace : '', name: String(s.name) }));
    const roleRef = (o.roleRef ?? {}) as Record<string, unknown>;
    const clusterRole =
      roleRef.kind === 'ClusterRole' && typeof roleRef.name === 'string' ? roleRef.name : undefined;
    return clusterRole ? { ref, serviceAccounts, clusterRole } : { ref, serviceAccounts };
  }
  return { ref };
}

const id = {
  pvc: (namespace: string, name: string) =>
    itemIdentity({ group: '', resource: 'persistentvolumeclaims', namespace, name }),
  pv: (name: string) => itemIdentity({ group: '', resource: 'persistentvolumes', namespace: '', name }),
  sa: (namespace: string, name: string) =>
    itemIdentity({ group: '', resource: 'serviceaccounts', namespace, name }),
  clusterRole: (name: string) =>
    itemIdentity({ group: 'rbac.authorization.k8s.io', resource: 'clusterroles', namespace: '', name }),
};

/**
 * Groups items into blocks, in collection order. `orderedResources` maps a group-resource
 * (`pods`, `deployments.apps`) to the `ns/name` (or `name`) list the user gave.
 */
export function buildItemBlocks(options: {
  items: readonly ItemFacts[];
  orderedResources?: Readonly<Record<string, readonly string[]>>;
}): ItemBlock[] {
  const collected = collectedItems(options.items);
  const relations = relationsOf(collected);
  const ordering = orderingOf(collected, options.orderedResources ?? {});
  const sorted = stableOrdered(collected.sequence, ordering.grOf, ordering.orderOf);
  return blocksOf({ sorted, relations, ordering });
}

/** The selected items by identity, each with its facts under every version, in collection order. */
interface CollectedItems {
  readonly byIdentity: ReadonlyMap<string, ItemFacts[]>;
  readonly sequence: readonly string[];
}

/** What points from an item to the items that must share its block. */
interface Relations {
  readonly items: CollectedItems;
  /** Reverse indexes for relations that point the other way. */
  readonly podsByClaim: ReadonlyMap<string, string[]>;
  readonly bindingsBySa: ReadonlyMap<string, string[]>;
}

/** Where an item stands in `orderedResources`, and its group-resource. */
interface Ordering {
  readonly orderOf: (key: string) => number | undefined;
  readonly grOf: (key: string) => string;
}

/** One entry per identity; the same object under several versions becomes one item list. */
function collectedItems(items: readonly ItemFacts[]): CollectedItems {
  const byIdentity = new Map<string, ItemFacts[]>();
  const sequence: string[] = [];
  for (const facts of items) {
    const key = itemIdentity(facts.ref);
    const existing = byIdentity.get(key);
    if (existing) {
      // The same object under another version joins its item; an exact repeat is dropped.
      if (!existing.some((f) => f.ref.version === facts.ref.version)) existing.push(facts);
    } else {
      byIdentity.set(key, [facts]);
      sequence.push(key);
    }
  }
  return { byIdentity, sequence };
}

/** Indexes the relations that point from the other end: a PVC's pods, a service account's bindings. */
function relationsOf(items: CollectedItems): Relations {
  const podsByClaim = new Map<string, string[]>();
  const bindingsBySa = new Map<string, string[]>();
  for (const key of items.sequence) {
    for (const facts of items.byIdentity.get(key) ?? []) {
      for (const claim of facts.claims ?? []) {
        const pvc = id.pvc(facts.ref.namespace, claim);
        podsByClaim.set(pvc, [...(podsByClaim.get(pvc) ?? []), key]);
      }
      for (const sa of facts.serviceAccounts ?? []) {
        const s = id.sa(sa.namespace, sa.name);
        bindingsBySa.set(s, [...(bindingsBySa.get(s) ?? []), key]);
      }
    }
  }
  return { items, podsByClaim, bindingsBySa };
}

/** The selected items that must share `key`'s block (relations to others are ignored). */
function relatedItems(relations: Relations, key: string): string[] {
  const { byIdentity } = relations.items;
  const out: string[] = [];
  for (const facts of byIdentity.get(key) ?? []) {
    const { ref } = facts;
    for (const claim of facts.claims ?? []) out.push(id.pvc(ref.namespace, claim));
    if (facts.volumeName) out.push(id.pv(facts.volumeName));
    if (ref.group === '' && ref.resource === 'persistentvolumeclaims')
      out.push(...(relations.podsByClaim.get(key) ?? []));
    if (ref.group === '' && ref.resource === 'serviceaccounts') {
      for (const binding of relations.bindingsBySa.get(key) ?? []) {
        out.push(binding);
        for (const b of byIdentity.get(binding) ?? [])
          if (b.clusterRole) out.push(id.clusterRole(b.clusterRole));
      }
    }
  }
  return out.filter((k) => byIdentity.has(k));
}

/** Ordered items of a resource come first, in the given order, then that resource's others. */
function orderingOf(items: CollectedItems, ordered: Readonly<Record<string, readonly string[]>>): Ordering {
  const orderIndex = new Map<string, number>();
  for (const [gr, names] of Object.entries(ordered)) {
    for (const [i, n] of names.entries()) orderIndex.set(`${gr}|${n}`, i);
  }
  return {
    orderOf: (key) => {
      const ref = items.byIdentity.get(key)?.[0]?.ref;
      return ref ? orderIndex.get(`${groupResource(ref)}|${namespacedName(ref)}`) : undefined;
    },
    grOf: (key) => {
      const ref = items.byIdentity.get(key)?.[0]?.ref;
      return ref ? groupResource(ref) : '';
    },
  };
}

/**
 * Walks the sorted items: each not yet in a block starts one and pulls in its related items,
 * depth first; a run of consecutive ordered items of one resource is one block.
 */
function blocksOf(options: {
  sorted: readonly string[];
  relations: Relations;
  ordering: Ordering;
}): ItemBlock[] {
  const { sorted, relations } = options;
  const { byIdentity } = relations.items;
  const { orderOf, grOf } = options.ordering;
  const assigned = new Set<string>();
  const blocks: ItemBlock[] = [];
  const addWithRelated = (start: string, into: string[]): void => {
    const stack = [start];
    while (stack.length > 0) {
      const key = stack.shift() as string;
      if (assigned.has(key)) continue;
      assigned.add(key);
      into.push(key);
      stack.unshift(...relatedItems(relations, key));
    }
  };
  for (let i = 0; i < sorted.length; i++) {
    const key = sorted[i] as string;
    if (assigned.has(key)) continue;
    const members: string[] = [];
    if (orderOf(key) !== undefined) {
      // The run of consecutive ordered items of this resource is one block.
      const gr = grOf(key);
      let j = i;
      while (
        j < sorted.length &&
        grOf(sorted[j] as string) === gr &&
        orderOf(sorted[j] as string) !== undefined
      ) {
        addWithRelated(sorted[j] as string, members);
        j++;
      }
    } else {
      addWithRelated(key, members);
    }
    blocks.push({ items: members.flatMap((k) => (byIdentity.get(k) ?? []).map((f) => f.ref)) });
  }
  return blocks;
}

/** Within each resource, ordered items first (by their given position), others after, stable. */
function stableOrdered(
  sequence: readonly string[],
  grOf: (key: string) => string,
  orderOf: (key: string) => number | undefined,
): string[] {
  const groups = new Map<string, string[]>();
  const groupOrder: string[] = [];
  for (const key of sequence) {
    const gr = grOf(key);
    if (!groups.has(gr)) {
      groups.set(gr, []);
      groupOrder.push(gr);
    }
    groups.get(gr)?.push(key);
  }
  return groupOrder.flatMap((gr) => {
    const keys = groups.get(gr) ?? [];
    const withOrder = keys.filter((k) => orderOf(k) !== undefined);
    const rest = keys.filter((k) => orderOf(k) === undefined);
    withOrder.sort((a, b) => (orderOf(a) ?? 0) - (orderOf(b) ?? 0));
    return [...withOrder, ...rest];
  });
}
