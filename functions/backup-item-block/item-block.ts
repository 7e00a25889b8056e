/**
 * One ItemBlock backed up, the part the worker and the hook runner share: pre hooks on the
 * block's pods → every item's tar entries and its volumes' snapshots started (volumes.ts) →
 * post hooks, gathered into a `BlocksOutput` that is written as one fragment and one result.
 * Parses only the objects it must look into (pods for hooks and volumes; PVCs and PVs for
 * volumes and when a Fail pre hook skips a pod). Never writes under `backups/`.
 */
import { type TarEntry, tarOf } from '../../shared/adapters/tar-archive.js';
import { backupRequest } from '../../shared/contracts/backup-request.js';
import {
  type BlockItem,
  blockItem,
  type ItemBlockMessage,
  type MessageResult,
} from '../../shared/contracts/backup-run.js';
import { factsOf } from '../../shared/domain/backup/item-blocks.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import type { BackupHookSpec } from '../../shared/domain/hooks/backup.js';
import { type BlockHookPlan, hookStatusOf, itemsAfterPreHooks } from '../../shared/domain/hooks/plan.js';
import { apiVersionOf } from '../../shared/domain/kubernetes/api-resources.js';
import { itemIdentity } from '../../shared/domain/kubernetes/item-ref.js';
import { backupWorkKeys } from '../../shared/domain/storage/keys.js';
import { type LogEvent, logTextOf } from '../../shared/domain/storage/log.js';
import { emptyResults, mergeResults, type Results } from '../../shared/domain/storage/results.js';
import { withoutEndOfArchive } from '../../shared/domain/storage/tar-fragments.js';
import { entryNames } from '../../shared/domain/storage/tarball-layout.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { PodExec } from '../../shared/ports/pod-exec.js';
import { gzipFast } from '../common/gzip.js';
import {
  blockHasPods,
  type HookPhaseOutcome,
  planHooksOfBlock,
  planWarnings,
  runHookPhase,
} from './block-hooks.js';
import { type BlockVolumesDeps, backUpBlockVolumes } from './volumes.js';

export type BlockPayload = ItemBlockMessage['blocks'][number];
export type Backup = ItemBlockMessage['backup'];

export async function itemsOf(
  block: BlockPayload,
  store: ObjectStore,
  signal?: AbortSignal,
): Promise<BlockItem[]> {
  if ('items' in block) return block.items;
  const raw = await store.get(block.itemsKey, { signal });
  if (!raw) throw new LifeboatError(`the items of ItemBlock ${block.id} are missing from the working data`);
  return blockItem.array().parse(JSON.parse(Buffer.from(raw).toString('utf8')));
}

/** What backing up blocks gathers, written as one fragment and one result. */
export interface BlocksOutput {
  readonly items: MessageResult['items'];
  readonly entries: TarEntry[];
  readonly log: LogEvent[];
  results: Results;
  hooks: { attempted: number; failed: number };
}

export function emptyOutput(): BlocksOutput {
  return { items: [], entries: [], log: [], results: emptyResults, hooks: { attempted: 0, failed: 0 } };
}

/** The request's hook specs and a pod exec for its cluster, read once per message and only if needed. */
export interface HookSettings {
  readonly specs: readonly BackupHookSpec[];
  podExec(): Promise<PodExec>;
}

export function hookSettingsLoader(options: {
  backup: Pick<Backup, 'name' | 'runId'>;
  deps: { store: ObjectStore; podExecFor: (cluster: string) => Promise<PodExec>; signal?: AbortSignal };
}): () => Promise<HookSettings> {
  let loaded: Promise<HookSettings> | undefined;
  const load = async (): Promise<HookSettings> => {
    const { deps } = options;
    const raw = await deps.store.get(backupWorkKeys(options.backup).request, { signal: deps.signal });
    if (!raw)
      throw new LifeboatError(
        `the request of backup ${options.backup.name} is missing from the working data`,
      );
    const request = backupRequest.parse(JSON.parse(Buffer.from(raw).toString('utf8')));
    let exec: Promise<PodExec> | undefined;
    return {
      specs: request.backup.spec.hooks?.resources ?? [],
      podExec: () => {
        exec ??= deps.podExecFor(request.cluster);
        return exec;
      },
    };
  };
  return () => {
    loaded ??= load();
    return loaded;
  };
}

/**
 * The block's items into the output, then its volumes' snapshots started (volumes.ts): inside
 * the hooks, as Velero snapshots a PV while backing up the block's items.
 */
async function addItems(options: {
  output: BlocksOutput;
  items: readonly BlockItem[];
  backup: Backup;
  blockId: string;
  deps: Omit<BlockVolumesDeps, 'store' | 'clock'> & { store: ObjectStore; clock: Clock };
}): Promise<void> {
  const { output, deps } = options;
  const time = deps.clock.now().toISOString();
  for (const item of options.items) addItem(output, { item, backup: options.backup.name, time });
  const volumes = await backUpBlockVolumes({
    backup: options.backup,
    blockId: options.blockId,
    items: options.items,
    deps,
  });
  output.log.push(...volumes.log);
  output.results = mergeResults(output.results, volumes.results);
}

function addItem(output: BlocksOutput, options: { item: BlockItem; backup: string; time: string }): void {
  const { item } = options;
  const { ref } = item;
  for (const name of entryNames(ref, { preferred: item.preferred }))
    output.entries.push({ name, body: item.json });
  output.items.push({
    apiVersion: apiVersionOf(ref),
    kind: item.kind,
    namespace: ref.namespace,
    name: ref.name,
  });
  output.log.push({
    time: options.time,
    level: 'info',
    msg: 'Backed up item',
    // In the line's (byte) order: formatLogLine then need not sort them.
    fields: {
      backup: options.backup,
      name: ref.name,
      namespace: ref.namespace,
      resource: ref.group ? `${ref.resource}.${ref.group}` : ref.resource,
    },
  });
}

/** What backing up one block needs besides its items; `backUpBlock` takes it with the block. */
type BlockDeps = { store: ObjectStore; clock: Clock; signal?: AbortSignal } & Omit<
  BlockVolumesDeps,
  'store' | 'clock'
>;

/**
 * Backs up one block into `output`: pre hooks → items → post hooks. With a `budgetMs`, a block
 * whose hooks could run longer than that is not backed up and `deferred` is returned. Either
 * way the longest its hooks may take (`worstCaseMs`, from the plan alone) is returned.
 */
export async function backUpBlock(options: {
  block: BlockPayload;
  backup: Backup;
  output: BlocksOutput;
  hookSettings: () => Promise<HookSettings>;
  deps: BlockDeps;
  budgetMs?: number;
}): Promise<{ deferred: boolean; worstCaseMs: number }> {
  const { output, deps } = options;
  const backup = options.backup.name;
  const items = await itemsOf(options.block, deps.store, deps.signal);
  const blockId = options.block.id;
  if (!blockHasPods(items)) {
    await addItems({ output, items, backup: options.backup, blockId, deps });
    return { deferred: false, worstCaseMs: 0 };
  }
  const settings = await options.hookSettings();
  const { plan, worstCaseMs } = planHooksOfBlock({ items, specs: settings.specs });
  if (options.budgetMs !== undefined && plan.pods.length > 0 && worstCaseMs > options.budgetMs)
    return { deferred: true, worstCaseMs };
  const warned = planWarnings({ plan, clock: deps.clock, backup });
  output.log.push(...warned.log);
  output.results = mergeResults(output.results, warned.results);
  if (plan.pods.length === 0) {
    await addItems({ output, items, backup: options.backup, blockId, deps });
    return { deferred: false, worstCaseMs: 0 };
  }
  await backUpWithinHooks({ ...options, items, plan, podExec: await settings.podExec() });
  return { deferred: false, worstCaseMs };
}

/** Pre hooks, the items (but those a failed Fail pre hook takes out), then post hooks. */
async function backUpWithinHooks(options: {
  items: readonly BlockItem[];
  plan: BlockHookPlan;
  podExec: PodExec;
  block: BlockPayload;
  backup: Backup;
  output: BlocksOutput;
  deps: BlockDeps;
}): Promise<void> {
  const { output, deps, plan, podExec } = options;
  const backup = options.backup.name;
  const phase = (p: 'pre' | 'post', pods: typeof plan.pods) =>
    runHookPhase({
      pods,
      phase: p,
      podExec,
      clock: deps.clock,
      backup,
      ...(deps.signal ? { signal: deps.signal } : {}),
    });
  const pre = await phase('pre', plan.pods);
  const backUp =
    pre.failedPods.length > 0
      ? withoutSkippedItems({ items: options.items, failedPods: pre.failedPods, output, deps, backup })
      : options.items;
  output.log.push(...pre.log);
  await addItems({ output, items: backUp, backup: options.backup, blockId: options.block.id, deps });
  const failed = new Set(pre.failedPods.map((p) => `${p.namespace}/${p.name}`));
  // Velero: post hooks only where the pre hooks did not fail.
  const post = await phase(
    'post',
    plan.pods.filter((p) => p.post.length > 0 && !failed.has(`${p.pod.namespace}/${p.pod.name}`)),
  );
  output.log.push(...post.log);
  output.results = mergeResults(mergeResults(output.results, pre.results), post.results);
  const counts = hookStatusOf([...pre.runs, ...post.runs]);
  output.hooks = {
    attempted: output.hooks.attempted + counts.hooksAttempted,
    failed: output.hooks.failed + counts.hooksFailed,
  };
}

/**
 * The block's items without the pods whose Fail pre hook failed and the PVCs only they mount
 * (Velero), each skipped item logged.
 */
function withoutSkippedItems(options: {
  items: readonly BlockItem[];
  failedPods: HookPhaseOutcome['failedPods'];
  output: BlocksOutput;
  deps: Pick<BlockDeps, 'clock'>;
  backup: string;
}): readonly BlockItem[] {
  const { items, output, backup } = options;
  // Only now are the block's PVCs parsed: which of them only the skipped pods mount.
  const facts = items.map((i) =>
    i.ref.group === '' && (i.ref.resource === 'pods' || i.ref.resource === 'persistentvolumeclaims')
      ? factsOf(i.ref, JSON.parse(i.json))
      : { ref: i.ref },
  );
  const { skipped } = itemsAfterPreHooks({ items: facts, failedPods: options.failedPods });
  const skippedIds = new Set(skipped.map((s) => itemIdentity(s.ref)));
  const backUp = items.filter((i) => !skippedIds.has(itemIdentity(i.ref)));
  const time = options.deps.clock.now().toISOString();
  for (const { ref, reason } of skipped)
    output.log.push({
      time,
      level: 'info',
      msg: `Skipped item: ${reason}`,
      fields: {
        backup,
        name: ref.name,
        namespace: ref.namespace,
        resource: ref.group ? `${ref.resource}.${ref.group}` : ref.resource,
      },
    });
  return backUp;
}

/** Writes the output's fragment (when it has entries) and returns the result to record. */
export async function outputResult(options: {
  output: BlocksOutput;
  backup: Backup;
  /** The message's id, or the deferred block's result id. */
  resultId: string;
  store: ObjectStore;
}): Promise<MessageResult> {
  const { output } = options;
  let fragmentKey: string | null = null;
  if (output.entries.length > 0) {
    // The tar mtime is the backup's start, so a redelivery writes identical bytes.
    const tar = await tarOf(output.entries, { mtime: new Date(options.backup.startedAt) });
    fragmentKey = backupWorkKeys(options.backup).fragment(options.resultId);
    await options.store.put(fragmentKey, await gzipFast(withoutEndOfArchive(tar)), {
      contentType: 'application/gzip',
    });
  }
  const { text: logText, levels: logLevels } = logTextOf(output.log);
  return {
    messageId: options.resultId,
    items: output.items,
    fragmentKey,
    ...output.results,
    logText,
    logLevels,
    ...(output.hooks.attempted > 0 ? { hooks: output.hooks } : {}),
  };
}
