/**
 * CollectItems: lists what the backup selects, page by page, groups it into ItemBlocks and
 * sends them to the work queue, then records how many messages the workers must finish.
 * Items of resources that never relate to others leave as soon as their page is read; only
 * pods, PVCs, PVs, service accounts and RBAC objects (and orderedResources) are held until
 * their blocks can be built. Never writes under `backups/`.
 */

import { backupRequest, toBackupPlan } from '../../shared/contracts/backup-request.js';
import type { BackupRun, CollectedSummary } from '../../shared/contracts/backup-run.js';
import type { BackupPlan } from '../../shared/domain/backup/plan.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import type { ApiResource } from '../../shared/domain/kubernetes/api-resources.js';
import { selectorToString } from '../../shared/domain/kubernetes/label-selector.js';
import { combineWithIncludeExcludePolicy } from '../../shared/domain/kubernetes/resource-filter.js';
import { backupWorkKeys } from '../../shared/domain/storage/keys.js';
import type { LogEvent } from '../../shared/domain/storage/log.js';
import type { ServerVersion } from '../../shared/ports/cluster.js';
import { completeIfDone } from '../common/backup-completion.js';
import { readVolumeSettings } from '../common/volume-settings.js';
import { BlockSender } from './block-sender.js';
import { emitCrds, emitNamespaces } from './cluster-scoped.js';
import type { CollectItemsDeps } from './deps.js';
import { emitHeldBlocks, pullRelatedItems } from './held-items.js';
import { type Note, resolveFilter, resolveOrdered, resolvePolicyLists } from './resolve-names.js';
import { type Listed, listSelected, type Selection } from './selected-items.js';

export type { CollectItemsDeps } from './deps.js';

export async function collectItems(
  input: { run: BackupRun; taskToken: string },
  deps: CollectItemsDeps,
): Promise<CollectedSummary> {
  const { run } = input;
  const log: LogEvent[] = [];
  const note: Note = (level, msg, fields) => {
    log.push({ time: deps.clock.now().toISOString(), level, msg, ...(fields ? { fields } : {}) });
  };

  const plan = await readPlan(run, deps);
  const [discovery, version] = await Promise.all([
    deps.cluster.discover({ signal: deps.signal }),
    deps.cluster.serverVersion({ signal: deps.signal }),
  ]);
  const discovered = discovery.resources;
  for (const group of discovery.unavailable) {
    note('error', 'API group unavailable; its resources are not in the backup', { group });
  }
  const selection = await resolveSelection({ run, plan, discovered, deps, note });
  const sender = new BlockSender({
    run,
    store: deps.store,
    queue: deps.queue,
    maxMessageBytes: deps.maxMessageBytes ?? 200_000,
    signal: deps.signal,
  });
  const listed = await listSelected({ deps, plan, selection, discovered, sender, note });
  pullRelatedItems({ held: listed.held, candidates: listed.pullCandidates, note });
  await emitHeldBlocks({ held: listed.held, ordered: selection.ordered, emitBlock: sender.emitBlock });
  await emitClusterScoped({ deps, plan, selection, listed, discovered, sender, note });
  await sender.sendAll();
  return recordCollection({ input, deps, sender, version, log, note });
}

/** The backup's plan, from the request StartBackup kept in the working data. */
async function readPlan(run: BackupRun, deps: CollectItemsDeps): Promise<BackupPlan> {
  const stored = await deps.store.get(backupWorkKeys(run).request, { signal: deps.signal });
  if (!stored) throw new LifeboatError(`the request of backup ${run.name} is missing from the working data`);
  return toBackupPlan(backupRequest.parse(JSON.parse(Buffer.from(stored).toString('utf8'))));
}

/** The backup's filters and orderedResources, their names resolved through discovery. */
async function resolveSelection(options: {
  run: BackupRun;
  plan: BackupPlan;
  discovered: readonly ApiResource[];
  deps: CollectItemsDeps;
  note: Note;
}): Promise<Selection> {
  const { run, plan, discovered, deps, note } = options;
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
  return { filter, ordered, selectorQuery };
}

/** The namespaces and CRDs the backup takes along with its items, after them. */
async function emitClusterScoped(options: {
  deps: CollectItemsDeps;
  plan: BackupPlan;
  selection: Selection;
  listed: Listed;
  discovered: readonly ApiResource[];
  sender: BlockSender;
  note: Note;
}): Promise<void> {
  const { deps, plan, listed, discovered, note } = options;
  const { filter } = options.selection;
  const { emitBlock } = options.sender;
  // Namespaces of selected items, and (without a label selector) every namespace the filter names.
  await emitNamespaces({
    deps,
    plan,
    namespacesWithItems: listed.namespacesWithItems,
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
    customGroupResources: listed.customGroupResources,
    emitted: listed.emittedCrds,
    emitBlock,
    discovered,
    note,
  });
}

/**
 * Writes the collection log and the summary the workers' completion waits for, and completes
 * the wait itself if the workers are done already.
 */
async function recordCollection(options: {
  input: { run: BackupRun; taskToken: string };
  deps: CollectItemsDeps;
  sender: BlockSender;
  version: ServerVersion;
  log: readonly LogEvent[];
  note: Note;
}): Promise<CollectedSummary> {
  const { input, deps, version } = options;
  const { run } = input;
  const work = backupWorkKeys(run);
  const { messages, blocks, items } = options.sender.counts;
  const summary: CollectedSummary = {
    attempt: options.sender.attempt,
    messages,
    blocks,
    items,
    taskToken: input.taskToken,
    serverVersion: { gitVersion: version.gitVersion, major: version.major, minor: version.minor },
  };
  options.note('info', 'Collected items', { items, blocks, messages });
  await deps.store.put(work.collectLog, JSON.stringify(options.log), { contentType: 'application/json' });
  await deps.store.put(work.collected, JSON.stringify(summary), { contentType: 'application/json' });
  // Workers may all have finished before the summary existed; then nobody else completes the wait.
  await completeIfDone({ run, store: deps.store, callbacks: deps.callbacks, signal: deps.signal });
  return summary;
}
