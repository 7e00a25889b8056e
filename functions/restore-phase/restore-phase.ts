/**
 * RestorePhase: restores one chunk of one phase (one resource), its items in parallel with
 * bounded concurrency: create; when the object exists, skip it if equal, otherwise warn or
 * merge-patch it as `existingResourcePolicy` says. A CRD is waited on until Established and
 * NamesAccepted. Every item's outcome is recorded; a failed item never fails the chunk. The state
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
import type { LogEvent } from '../../shared/domain/backup-log.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import { restoreWorkKeys } from '../../shared/domain/storage-keys.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ClusterWriter } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { existingAction } from './compare.js';
import { earlierAttempt } from './earlier-attempt.js';

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
  const resource = phase.groupResource.split('.')[0] ?? phase.groupResource;
  const limit = deps.limit ?? pLimit(deps.concurrency ?? 16);
  const totals = { created: 0, updated: 0, skipped: 0, failed: 0 };

  const data = await deps.store.get(work.chunk(phase.groupResource, chunk));
  if (!data)
    throw new LifeboatError(
      `chunk ${chunk} of phase ${phase.groupResource} is missing from the working data`,
    );
  const items = plannedItem.array().parse(JSON.parse(Buffer.from(data).toString('utf8')));
  const log: LogEvent[] = [];
  const outcomes = await Promise.all(
    items.map((item) =>
      limit(async (): Promise<ItemOutcome> => {
        const object = item.object;
        const meta = (object.metadata ?? {}) as { namespace?: string; name?: string };
        const id = {
          apiVersion: String(object.apiVersion ?? ''),
          kind: String(object.kind ?? ''),
          namespace: meta.namespace ?? '',
          name: meta.name ?? '',
        };
        const fields = {
          restore: run.name,
          resource: phase.groupResource,
          namespace: id.namespace,
          name: id.name,
        };
        const note = (level: LogEvent['level'], msg: string): void => {
          log.push({ time: deps.clock.now().toISOString(), level, msg, fields });
        };
        try {
          const written = await deps.cluster.create({
            resource,
            object,
            ...(deps.signal ? { signal: deps.signal } : {}),
          });
          if (phase.groupResource === 'customresourcedefinitions.apiextensions.k8s.io') {
            await deps.cluster.waitForCrd({ name: id.name, timeoutMs: deps.crdTimeoutMs ?? 60_000 });
          }
          if (written.result === 'created') {
            note('info', 'Restored item');
            return { ...id, result: 'created' };
          }
          // A retried chunk finds what its earlier attempt wrote.
          const earlier = earlierAttempt({
            existing: written.existing,
            restoreName: run.name,
            startedAt: run.startedAt,
          });
          if (earlier) {
            note('info', earlier === 'created' ? 'Restored item' : 'Updated existing item');
            return { ...id, result: earlier };
          }
          const decided = existingAction({ existing: written.existing, desired: object, policy });
          if (decided.action === 'update') {
            await deps.cluster.mergePatch({ resource, object, patch: object });
            note('info', 'Updated existing item');
            return { ...id, result: 'updated' };
          }
          const differs = decided.reason.includes('differs');
          note(differs ? 'warning' : 'info', `Skipped: ${decided.reason}`);
          return { ...id, result: 'skipped', message: decided.reason };
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          note('error', `Could not restore: ${message}`);
          return { ...id, result: 'failed', message };
        }
      }),
    ),
  );
  for (const o of outcomes) totals[o.result]++;
  await deps.store.put(
    work.outcome(phase.index, chunk),
    gzipSync(JSON.stringify({ outcomes, log } satisfies PhaseOutcome)),
    {
      contentType: 'application/gzip',
    },
  );
  return { phase: phase.groupResource, chunk, ...totals };
}
