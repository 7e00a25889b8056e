/**
 * RestorePhase: restores one chunk of one phase (one resource), its items in parallel with
 * bounded concurrency: create; when the object exists, skip it if equal, otherwise warn or
 * merge-patch it as `existingResourcePolicy` says. A CRD is waited on until Established and
 * NamesAccepted. Every item's outcome is recorded; a failed item never fails the chunk, except one
 * the cluster keeps refusing with 429/5xx, which fails it (after every item had its try) until
 * the step's last attempt, where that item is recorded failed. The state
 * machine runs the chunks of a phase in parallel invocations; an invocation is idempotent: a
 * retry rewrites the same outcome key and reports what an earlier attempt wrote as it did.
 */
import { gzipSync } from 'node:zlib';
import pLimit, { type LimitFunction } from 'p-limit';
import { restoreRequest } from '../../shared/contracts/restore-request.js';
import {
  type ChunkTotals,
  type ItemOutcome,
  plannedItem,
  type RestoreChunk,
} from '../../shared/contracts/restore-run.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import { restoreWorkKeys } from '../../shared/domain/storage/keys.js';
import type { LogEvent } from '../../shared/domain/storage/log.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ClusterWriter } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { recordPodHooks } from '../restore-hooks/pod-hook-records.js';
import { restoreItem } from './restore-item.js';

export interface RestorePhaseDeps {
  readonly store: ObjectStore;
  readonly cluster: ClusterWriter;
  readonly clock: Clock;
  readonly concurrency?: number;
  /** Shared by several invocations (the local runtime): bounds their item writes together. */
  readonly limit?: LimitFunction;
  readonly crdTimeoutMs?: number;
  readonly signal?: AbortSignal;
}

export interface PhaseOutcome {
  readonly outcomes: ItemOutcome[];
  readonly log: LogEvent[];
}

export async function restorePhase(
  input: RestoreChunk,
  deps: RestorePhaseDeps,
): Promise<{ phase: string; chunk: number } & ChunkTotals> {
  const { run, phase, chunk } = input;
  const work = restoreWorkKeys(run);
  const raw = await deps.store.get(work.request);
  if (!raw) throw new LifeboatError(`the request of restore ${run.name} is missing from the working data`);
  const policy =
    restoreRequest.parse(JSON.parse(Buffer.from(raw).toString('utf8'))).restore.spec.existingResourcePolicy ??
    'none';
  const limit = deps.limit ?? pLimit(deps.concurrency ?? 16);
  const totals = { created: 0, updated: 0, skipped: 0, failed: 0 };
  const data = await deps.store.get(work.chunk(phase.groupResource, chunk));
  if (!data)
    throw new LifeboatError(
      `chunk ${chunk} of phase ${phase.groupResource} is missing from the working data`,
    );
  const items = plannedItem.array().parse(JSON.parse(Buffer.from(data).toString('utf8')));
  const log: LogEvent[] = [];
  const settled = await Promise.allSettled(
    items.map((item) =>
      limit(() =>
        restoreItem(item, {
          run,
          groupResource: phase.groupResource,
          policy,
          cluster: deps.cluster,
          clock: deps.clock,
          log,
          ...(input.lastAttempt ? { lastAttempt: true } : {}),
          ...(deps.crdTimeoutMs ? { crdTimeoutMs: deps.crdTimeoutMs } : {}),
          ...(deps.signal ? { signal: deps.signal } : {}),
        }),
      ),
    ),
  );
  // Every item has had its try before the chunk fails: none is left writing under a retry.
  const outcomes = settled.map((s) => {
    if (s.status === 'rejected') throw s.reason;
    return s.value;
  });
  for (const o of outcomes) totals[o.result]++;
  // Created pods with exec hooks, one key each, for RestoreHooks (before the outcome: a retry redoes both).
  await recordPodHooks({
    store: deps.store,
    run,
    items,
    outcomes,
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  await deps.store.put(
    work.outcome(phase.index, chunk),
    gzipSync(JSON.stringify({ outcomes, log } satisfies PhaseOutcome)),
    {
      contentType: 'application/gzip',
    },
  );
  return { phase: phase.groupResource, chunk, ...totals };
}
