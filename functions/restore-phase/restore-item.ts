/**
 * Restoring one planned item, as Velero's restoreItem does once the object is prepared: create
 * it (a CRD is then waited on); after a create, write its backed-up status back when the plan
 * kept one (`restoreStatus`; a failure is a warning, as Velero's); when it exists, report what an
 * earlier attempt of this restore wrote as that attempt did, else skip it if equal, merge a
 * ServiceAccount, or warn or merge-patch as `existingResourcePolicy` says. Resource modifier
 * rules that failed while planning are errors of the item, which is restored all the same.
 * Throws only a RetryableError before the chunk's last attempt: every other outcome, failures
 * included, is returned and logged.
 */
import type { ItemOutcome, PlannedItem, RestoreRun } from '../../shared/contracts/restore-run.js';
import { RetryableError } from '../../shared/domain/errors.js';
import { addedWithNamespace } from '../../shared/domain/kubernetes/namespace-defaults.js';
import type { LogEvent } from '../../shared/domain/storage/log.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ClusterWriter } from '../../shared/ports/cluster.js';
import { existingAction } from './compare.js';
import { earlierAttempt } from './earlier-attempt.js';

const CRDS = 'customresourcedefinitions.apiextensions.k8s.io';

export interface ItemContext {
  readonly run: RestoreRun;
  readonly groupResource: string;
  readonly policy: 'none' | 'update';
  readonly cluster: ClusterWriter;
  readonly clock: Clock;
  /** Where the item's log events go. */
  readonly log: LogEvent[];
  readonly crdTimeoutMs?: number;
  /** How long to wait for the cluster to add a new namespace's default objects (15 s). */
  readonly clusterDefaultWaitMs?: number;
  /** The chunk's last attempt: a 429/5xx that outlasts every retry fails the item, not the chunk. */
  readonly lastAttempt?: boolean;
  readonly signal?: AbortSignal;
}

export async function restoreItem(item: PlannedItem, ctx: ItemContext): Promise<ItemOutcome> {
  const attempt = startAttempt(item, ctx);
  try {
    return await createItem(attempt);
  } catch (error) {
    // Throttling or a server error the adapter's own retries did not outlast: the chunk fails
    // and its step is retried (a retried chunk recognises what this attempt wrote); on the last
    // attempt the item fails, named in the results, as Velero records a failed create.
    if (error instanceof RetryableError && !ctx.lastAttempt) throw error;
    const message = error instanceof Error ? error.message : String(error);
    attempt.note('error', `Could not restore: ${message}`);
    return { ...attempt.id, result: 'failed', message, ...problemsOf(attempt) };
  }
}

/** One item being restored: who it is, where its log lines and problems go. */
interface ItemAttempt {
  readonly item: PlannedItem;
  readonly ctx: ItemContext;
  readonly id: Pick<ItemOutcome, 'apiVersion' | 'kind' | 'namespace' | 'name'>;
  /** The resource's plural, as the cluster's writes take it. */
  readonly resource: string;
  readonly signal: { signal?: AbortSignal };
  note(level: LogEvent['level'], msg: string): void;
  readonly errors: string[];
  readonly warnings: string[];
  /** A created or updated item's message: the resource modifier rules that failed. */
  readonly modifierMessage: { message?: string };
}

function startAttempt(item: PlannedItem, ctx: ItemContext): ItemAttempt {
  const { object } = item;
  const meta = (object.metadata ?? {}) as { namespace?: string; name?: string };
  const id = {
    apiVersion: String(object.apiVersion ?? ''),
    kind: String(object.kind ?? ''),
    namespace: meta.namespace ?? '',
    name: meta.name ?? '',
  };
  const fields = {
    restore: ctx.run.name,
    resource: ctx.groupResource,
    namespace: id.namespace,
    name: id.name,
  };
  const note = (level: LogEvent['level'], msg: string): void => {
    ctx.log.push({ time: ctx.clock.now().toISOString(), level, msg, fields });
  };
  // Velero: a modifier error is the item's error, yet the item is restored as modified so far.
  for (const problem of item.problems ?? []) note('error', `Resource modifiers: ${problem}`);
  for (const warning of item.warnings ?? []) note('warning', warning);
  return {
    item,
    ctx,
    id,
    resource: ctx.groupResource.split('.')[0] ?? ctx.groupResource,
    signal: ctx.signal ? { signal: ctx.signal } : {},
    note,
    errors: (item.problems ?? []).map((p) => `resource modifiers: ${p}`),
    warnings: [...(item.warnings ?? [])],
    modifierMessage: item.problems?.length
      ? { message: `resource modifiers: ${item.problems.join('; ')}` }
      : {},
  };
}

/** Velero adds each to the restore's results, whatever becomes of the item itself. */
function problemsOf(attempt: ItemAttempt): { errors?: string[]; warnings?: string[] } {
  return {
    ...(attempt.errors.length > 0 ? { errors: attempt.errors } : {}),
    ...(attempt.warnings.length > 0 ? { warnings: [...attempt.warnings] } : {}),
  };
}

/** Creates the item; one that exists already is settled by settleExisting. */
async function createItem(attempt: ItemAttempt): Promise<ItemOutcome> {
  const { ctx, id, resource, signal } = attempt;
  const { object } = attempt.item;
  if (id.namespace && addedWithNamespace(ctx.groupResource, id.name)) {
    // In a namespace this restore just created the cluster adds this object itself, soon:
    // wait for it, so the restore finds it existing, as its dry run foresaw, whatever the load.
    await waitForClusterDefault({ ctx, resource, object, ...signal });
  }
  const written = await ctx.cluster.create({ resource, object, ...signal });
  if (ctx.groupResource === CRDS) {
    await ctx.cluster.waitForCrd({ name: id.name, timeoutMs: ctx.crdTimeoutMs ?? 60_000, ...signal });
  }
  if (written.result === 'created') {
    attempt.note('info', 'Restored item');
    await writeStatus(attempt, resourceVersionOf(written.created));
    return { ...id, result: 'created', ...attempt.modifierMessage, ...problemsOf(attempt) };
  }
  return settleExisting(attempt, written.existing);
}

/** An item that exists: what an earlier attempt wrote, else as `existingResourcePolicy` says. */
async function settleExisting(attempt: ItemAttempt, existing: Record<string, unknown>): Promise<ItemOutcome> {
  const { ctx, id, resource, signal } = attempt;
  const { object } = attempt.item;
  // A retried chunk finds what its earlier attempt wrote.
  const earlier = earlierAttempt({ existing, restoreName: ctx.run.name, startedAt: ctx.run.startedAt });
  if (earlier) {
    attempt.note('info', earlier === 'created' ? 'Restored item' : 'Updated existing item');
    // The earlier attempt may have stopped between the create and the status write.
    if (earlier === 'created') await writeStatus(attempt, resourceVersionOf(existing));
    return { ...id, result: earlier, ...attempt.modifierMessage, ...problemsOf(attempt) };
  }
  const decided = existingAction({
    existing,
    desired: object,
    policy: ctx.policy,
    groupResource: ctx.groupResource,
  });
  if (decided.action === 'update') {
    await ctx.cluster.mergePatch({ resource, object, patch: decided.patch, ...signal });
    attempt.note(
      'info',
      ctx.groupResource === 'serviceaccounts'
        ? 'Merged the backed-up service account into the existing one'
        : 'Updated existing item',
    );
    return { ...id, result: 'updated', ...attempt.modifierMessage, ...problemsOf(attempt) };
  }
  if (decided.warning) {
    attempt.note('warning', decided.warning);
    attempt.warnings.push(decided.warning);
  } else attempt.note('info', `Skipped: ${decided.reason}`);
  return { ...id, result: 'skipped', message: decided.reason, ...problemsOf(attempt) };
}

const resourceVersionOf = (object: Record<string, unknown>): unknown =>
  (object.metadata as { resourceVersion?: unknown } | undefined)?.resourceVersion;

/** The backed-up status, when the plan kept one; a failure is a warning, as Velero's. */
async function writeStatus(attempt: ItemAttempt, resourceVersion: unknown): Promise<void> {
  const { item, ctx } = attempt;
  if (item.status === undefined) return;
  try {
    await ctx.cluster.replaceStatus({
      resource: attempt.resource,
      object: item.object,
      status: item.status,
      resourceVersion: String(resourceVersion ?? ''),
      ...attempt.signal,
    });
    attempt.note('info', 'Restored the status');
  } catch (error) {
    const message = `Could not restore the status: ${error instanceof Error ? error.message : String(error)}`;
    attempt.note('warning', message);
    attempt.warnings.push(message);
  }
}

/** How long a restore waits for the cluster to add a namespace's default objects. */
const CLUSTER_DEFAULT_WAIT_MS = 15_000;

async function waitForClusterDefault(options: {
  ctx: ItemContext;
  resource: string;
  object: Record<string, unknown>;
  signal?: AbortSignal;
}): Promise<void> {
  const { ctx, resource, object, signal } = options;
  const deadline = Date.now() + (ctx.clusterDefaultWaitMs ?? CLUSTER_DEFAULT_WAIT_MS);
  for (;;) {
    if (await ctx.cluster.read({ resource, object, ...(signal ? { signal } : {}) })) return;
    // Past the wait (a cluster without those controllers), the restore creates it itself.
    if (Date.now() >= deadline || signal?.aborted) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
