/**
 * The items CollectItems holds until listing ends (those of resources whose items relate to
 * others): the related items not selected on their own pulled in as Velero's backup item actions
 * pull them in, then all of them grouped into ItemBlocks. Never lists or reads the cluster: it
 * works only on what listing kept.
 */

import type { BlockItem } from '../../shared/contracts/backup-run.js';
import { buildItemBlocks, type ItemFacts } from '../../shared/domain/backup/item-blocks.js';
import { itemIdentity } from '../../shared/domain/kubernetes/item-ref.js';
import type { Note } from './resolve-names.js';

/** A listed item with the facts block building needs. */
export interface Held {
  readonly facts: ItemFacts;
  readonly item: BlockItem;
}

/** Puts the candidate of an identity among the held items, unless it is there already. */
type Pull = (identity: string) => void;

const clusterRoleOf = (name: string): string =>
  itemIdentity({ group: 'rbac.authorization.k8s.io', resource: 'clusterroles', namespace: '', name });

/**
 * Related items not selected on their own, added to `held`: PVs of selected PVCs, bindings and
 * roles of selected SAs. `candidates` are the unselected items of the kinds that may be pulled in.
 */
export function pullRelatedItems(options: {
  held: Held[];
  candidates: ReadonlyMap<string, readonly Held[]>;
  note: Note;
}): void {
  const { held, candidates, note } = options;
  const heldIds = new Set(held.map((h) => itemIdentity(h.facts.ref)));
  const pull: Pull = (identity) => {
    const candidate = candidates.get(identity)?.[0];
    if (candidate && !heldIds.has(identity)) {
      held.push(candidate);
      heldIds.add(identity);
      note('info', 'Pulled in related item', { item: identity });
    }
  };
  pullStorage(held, pull);
  pullRbac({ held, candidates, pull });
}

function pullStorage(held: readonly Held[], pull: Pull): void {
  // Velero's pod action: the PVCs a selected pod mounts.
  for (const h of [...held]) {
    for (const claim of h.facts.claims ?? []) {
      pull(
        itemIdentity({
          group: '',
          resource: 'persistentvolumeclaims',
          namespace: h.facts.ref.namespace,
          name: claim,
        }),
      );
    }
  }
  // Velero's PVC action: the PV of each PVC.
  for (const h of [...held]) {
    if (h.facts.volumeName)
      pull(
        itemIdentity({ group: '', resource: 'persistentvolumes', namespace: '', name: h.facts.volumeName }),
      );
  }
}

function pullRbac(options: {
  held: readonly Held[];
  candidates: ReadonlyMap<string, readonly Held[]>;
  pull: Pull;
}): void {
  const { held, pull } = options;
  const selectedSas = new Set(
    held
      .filter((h) => h.facts.ref.resource === 'serviceaccounts' && h.facts.ref.group === '')
      .map((h) => `${h.facts.ref.namespace}/${h.facts.ref.name}`),
  );
  // A binding backed up on its own brings its cluster role.
  for (const h of [...held]) if (h.facts.clusterRole) pull(clusterRoleOf(h.facts.clusterRole));
  // Velero's service account action: the bindings naming a selected SA, and their cluster roles.
  for (const [identity, [candidate]] of options.candidates) {
    if (!candidate?.facts.serviceAccounts?.some((sa) => selectedSas.has(`${sa.namespace}/${sa.name}`)))
      continue;
    pull(identity);
    if (candidate.facts.clusterRole) pull(clusterRoleOf(candidate.facts.clusterRole));
  }
}

/** The held items grouped into ItemBlocks (orderedResources respected), each block emitted in turn. */
export async function emitHeldBlocks(options: {
  held: readonly Held[];
  ordered: Record<string, readonly string[]>;
  emitBlock: (items: BlockItem[]) => Promise<void>;
}): Promise<void> {
  const { held } = options;
  const byIdentity = new Map(
    held.map((h) => [`${itemIdentity(h.facts.ref)}@${h.facts.ref.version}`, h.item]),
  );
  for (const block of buildItemBlocks({
    items: held.map((h) => h.facts),
    orderedResources: options.ordered,
  })) {
    await options.emitBlock(
      block.items
        .map((ref) => byIdentity.get(`${itemIdentity(ref)}@${ref.version}`))
        .filter((i): i is BlockItem => i !== undefined),
    );
  }
}
