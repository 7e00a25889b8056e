/**
 * CollectItems: lists what the backup selects, page by page, groups it into ItemBlocks and
 * sends them to the work queue, then records how many messages the workers must finish.
 * Items of resources that never relate to others leave as soon as their page is read; only
 * pods, PVCs, PVs, service accounts and RBAC objects (and orderedResources) are held until
 * their blocks can be built. Never writes under `backups/`.
 */

import { randomUUID } from 'node:crypto';
import { backupRequest, toBackupPlan } from '../../shared/contracts/backup-request.js';
import type {
  BackupRun,
  BlockItem,
  CollectedSummary,
  ItemBlockMessage,
} from '../../shared/contracts/backup-run.js';
import { messageBody, type WireBlock, wireBlock } from '../../shared/contracts/item-block-wire.js';
import { buildItemBlocks, factsOf, type ItemFacts } from '../../shared/domain/backup/item-blocks.js';
import { excludedByLabel } from '../../shared/domain/backup/plan.js';
import { LifeboatError, ResourceGone } from '../../shared/domain/errors.js';
import { collectionOrder, groupResource } from '../../shared/domain/kubernetes/api-resources.js';
import { shouldInclude } from '../../shared/domain/kubernetes/includes-excludes.js';
import { type ItemRef, itemIdentity } from '../../shared/domain/kubernetes/item-ref.js';
import { itemSelected, selectorToString } from '../../shared/domain/kubernetes/label-selector.js';
import {
  collectsResource,
  combineWithIncludeExcludePolicy,
  excludesRelated,
} from '../../shared/domain/kubernetes/resource-filter.js';
import { backupWorkKeys } from '../../shared/domain/storage/keys.js';
import type { LogEvent } from '../../shared/domain/storage/log.js';
import type { ListPage } from '../../shared/ports/cluster.js';
import { completeIfDone } from '../common/backup-completion.js';
import { readVolumeSettings } from '../common/volume-settings.js';
import { emitCrds, emitNamespaces } from './cluster-scoped.js';
import type { CollectItemsDeps } from './deps.js';
import { listPages, meta } from './list-all.js';

export type { CollectItemsDeps } from './deps.js';

import { resolveFilter, resolveOrdered, resolvePolicyLists } from './resolve-names.js';

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

interface Held {
  readonly facts: ItemFacts;
  readonly item: BlockItem;
}

export async function collectItems(
  input: { run: BackupRun; taskToken: string },
  deps: CollectItemsDeps,
): Promise<CollectedSummary> {
  const { run } = input;
  const work = backupWorkKeys(run);
  const pageSize = deps.pageSize ?? 500;
  const maxMessageBytes = deps.maxMessageBytes ?? 200_000;
  const log: LogEvent[] = [];
  const note = (level: LogEvent['level'], msg: string, fields?: LogEvent['fields']): void => {
    log.push({ time: deps.clock.now().toISOString(), level, msg, ...(fields ? { fields } : {}) });
  };

  const stored = await deps.store.get(work.request, { signal: deps.signal });
  if (!stored) throw new LifeboatError(`the request of backup ${run.name} is missing from the working data`);
  const plan = toBackupPlan(backupRequest.parse(JSON.parse(Buffer.from(stored).toString('utf8'))));

  const [discovery, version] = await Promise.all([
    deps.cluster.discover({ signal: deps.signal }),
    deps.cluster.serverVersion({ signal: deps.signal }),
  ]);
  const discovered = discovery.resources;
  for (const group of discovery.unavailable) {
    note('error', 'API group unavailable; its resources are not in the backup', { group });
  }
  const order = collectionOrder(discovered);
  // The resource policy's includeExcludePolicy (Velero 1.17) joins the backup's own filters.
  const { policy } = await readVolumeSettings({ run, store: deps.store, signal: deps.signal });
  const ownFilter = resolveFilter(plan, discovered, note);
  const filter = policy?.includeExcludePolicy
    ? combineWithIncludeExcludePolicy(
        ownFilter,
        resolvePolicyLists(policy.includeExcludePolicy, discovered, note),
      )
    : ownFilter;
  const ordered = resolveOrdered(plan, discovered, note);
  const selectorQuery = plan.labelSelector ? selectorToString(plan.labelSelector) : undefined;

  let messageSeq = 0;
  let blockSeq = 0;
  let items = 0;
  /** The blocks of the message being filled, each serialized once when it was built. */
  let pending: WireBlock[] = [];
  let pendingBytes = 0;
  const outgoing: string[] = [];
  // A retried CollectItems starts a new attempt: its messages, block items and results never
  // mix with those of an earlier attempt still in flight.
  const attempt = randomUUID().slice(0, 8);
  const backupHeader = JSON.stringify({ name: run.name, runId: run.runId, startedAt: run.startedAt });
  const packMessage = (): void => {
    if (pending.length === 0) return;
    messageSeq++;
    const messageId: ItemBlockMessage['messageId'] = `${attempt}-${String(messageSeq).padStart(7, '0')}`;
    outgoing.push(messageBody({ backup: backupHeader, messageId, blocks: pending }));
    pending = [];
    pendingBytes = 0;
  };
  const flush = async (force: boolean): Promise<void> => {
    if (force) packMessage();
    if (outgoing.length >= 10 || (force && outgoing.length > 0)) {
      await deps.queue.send(outgoing.splice(0), { signal: deps.signal });
    }
  };
  const place = (block: WireBlock): void => {
    // Close the message before it would grow past the limit (room left for its header).
    if (pendingBytes + block.bytes > maxMessageBytes - 1_000) packMessage();
    pending.push(block);
    pendingBytes += block.bytes;
  };
  const storeAndPlace = async (id: string, blockItems: BlockItem[]): Promise<void> => {
    const itemsKey = work.blockItems(id);
    await deps.store.put(itemsKey, JSON.stringify(blockItems), { contentType: 'application/json' });
    place(wireBlock({ id, itemsKey }));
    await flush(false);
  };
  /**
   * Adds a block to the message being filled. Returns what must be awaited before the next
   * block (a block stored for being too large, a batch of messages sent), if anything: most
   * blocks need no await, and so no promise.
   */
  const addBlock = (blockItems: BlockItem[]): Promise<void> | undefined => {
    blockSeq++;
    items += blockItems.length;
    const id = `${attempt}-${String(blockSeq).padStart(7, '0')}`;
    const block = wireBlock({ id, items: blockItems });
    if (block.bytes > maxMessageBytes - 1_000) return storeAndPlace(id, blockItems);
    place(block);
    return outgoing.length >= 10 ? flush(false) : undefined;
  };
  const emitBlock = async (blockItems: BlockItem[]): Promise<void> => {
    await addBlock(blockItems);
  };

  const held: Held[] = [];
  const emittedCrds = new Set<string>();
  const pullCandidates = new Map<string, Held[]>();
  const namespacesWithItems = new Set<string>();
  const customGroupResources = new Set<string>();

  const toList = order.flatMap((resource) => {
    const gr = groupResource(resource);
    if (gr === 'namespaces') return [];
    const direct = collectsResource({
      filter,
      namespaces: plan.namespaces,
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
  // Most resource types hold few objects: the first pages of the next few are fetched ahead,
  // so their round trips overlap; memory stays bounded by the window.
  const PREFETCH = 8;
  const firstPages: Promise<ListPage>[] = [];
  const prefetch = (i: number): void => {
    const next = toList[i];
    if (!next || firstPages[i]) return;
    // Kinds that may be pulled in are listed whole: a selected pod's PVC need not match the selector.
    const labelSelector = next.direct && !next.pullable ? selectorQuery : undefined;
    firstPages[i] = deps.cluster.listPage({
      resource: next.resource,
      limit: pageSize,
      ...(labelSelector ? { labelSelector } : {}),
      ...(deps.signal ? { signal: deps.signal } : {}),
    });
    // Awaited in order below; never an unhandled rejection meanwhile.
    firstPages[i]?.catch(() => undefined);
  };
  for (const [index, { resource, gr, direct, pullable, streamable }] of toList.entries()) {
    for (let ahead = index; ahead < index + PREFETCH; ahead++) prefetch(ahead);
    let count = 0;
    try {
      for await (const page of listPages({
        cluster: deps.cluster,
        resource,
        pageSize,
        labelSelector: direct && !pullable ? selectorQuery : undefined,
        signal: deps.signal,
        firstPage: firstPages[index],
        onRestart: () => note('warning', 'list expired, restarting', { resource: gr }),
      }))
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
            const sending = addBlock([item]);
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
        continue;
      }
      note('error', 'Could not list a resource; its items are not in the backup', {
        resource: gr,
        reason: error instanceof Error ? error.message : String(error),
      });
    }
    if (count > 0) note('info', 'Listed items', { resource: gr, count });
  }

  // Related items not selected on their own: PVs of selected PVCs, bindings and roles of selected SAs.
  const heldIds = new Set(held.map((h) => itemIdentity(h.facts.ref)));
  const pull = (identity: string): void => {
    const candidate = pullCandidates.get(identity)?.[0];
    if (candidate && !heldIds.has(identity)) {
      held.push(candidate);
      heldIds.add(identity);
      note('info', 'Pulled in related item', { item: identity });
    }
  };
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
  const selectedSas = new Set(
    held
      .filter((h) => h.facts.ref.resource === 'serviceaccounts' && h.facts.ref.group === '')
      .map((h) => `${h.facts.ref.namespace}/${h.facts.ref.name}`),
  );
  const clusterRoleOf = (name: string): string =>
    itemIdentity({ group: 'rbac.authorization.k8s.io', resource: 'clusterroles', namespace: '', name });
  // A binding backed up on its own brings its cluster role.
  for (const h of [...held]) if (h.facts.clusterRole) pull(clusterRoleOf(h.facts.clusterRole));
  for (const [identity, [candidate]] of pullCandidates) {
    if (!candidate?.facts.serviceAccounts?.some((sa) => selectedSas.has(`${sa.namespace}/${sa.name}`)))
      continue;
    pull(identity);
    if (candidate.facts.clusterRole) {
      pull(
        itemIdentity({
          group: 'rbac.authorization.k8s.io',
          resource: 'clusterroles',
          namespace: '',
          name: candidate.facts.clusterRole,
        }),
      );
    }
  }

  const byIdentity = new Map(
    held.map((h) => [`${itemIdentity(h.facts.ref)}@${h.facts.ref.version}`, h.item]),
  );
  for (const block of buildItemBlocks({ items: held.map((h) => h.facts), orderedResources: ordered })) {
    await emitBlock(
      block.items
        .map((ref) => byIdentity.get(`${itemIdentity(ref)}@${ref.version}`))
        .filter((i): i is BlockItem => i !== undefined),
    );
  }

  // Namespaces of selected items, and (without a label selector) every namespace the filter names.
  await emitNamespaces({
    deps,
    plan,
    namespacesWithItems,
    // Velero backs up the namespaces of selected items even without cluster resources,
    // unless `namespaces` itself is excluded.
    excluded: (filter.style === 'old' ? filter.resources : filter.clusterScoped).excludes.some(
      (e) => e === 'namespaces' || e === '*',
    ),
    emitBlock,
    discovered,
    note,
  });
  // The CRD of every backed-up custom resource, unless CRDs are explicitly excluded (Velero).
  // A CRD's name is `<plural>.<group>`, the group-resource of the objects it defines.
  await emitCrds({
    deps,
    filter,
    namespaces: plan.namespaces,
    customGroupResources,
    emitted: emittedCrds,
    emitBlock,
    discovered,
    note,
  });
  await flush(true);

  const summary: CollectedSummary = {
    attempt,
    messages: messageSeq,
    blocks: blockSeq,
    items,
    taskToken: input.taskToken,
    serverVersion: { gitVersion: version.gitVersion, major: version.major, minor: version.minor },
  };
  note('info', 'Collected items', { items, blocks: blockSeq, messages: messageSeq });
  await deps.store.put(work.collectLog, JSON.stringify(log), { contentType: 'application/json' });
  await deps.store.put(work.collected, JSON.stringify(summary), { contentType: 'application/json' });
  // Workers may all have finished before the summary existed; then nobody else completes the wait.
  await completeIfDone({ run, store: deps.store, callbacks: deps.callbacks, signal: deps.signal });
  return summary;
}
