/**
 * FinalizeRestore: writes what Velero keeps under `restores/<name>/` (log, results, resource list
 * with each item's outcome, item operations, volume info) and Lifeboat's record of the restore
 * with its phase, counts and hook status; the restored pods' exec hooks are in the log and the
 * results (a failed hook is an error: PartiallyFailed). Each object is written only if absent.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import pLimit from 'p-limit';
import type { RestoreRun } from '../../shared/contracts/restore-run.js';
import { rfc3339 } from '../../shared/domain/storage/backup-document.js';
import { restoreKeys, restoreWorkKeys } from '../../shared/domain/storage/keys.js';
import { formatLogLine, type LogEvent } from '../../shared/domain/storage/log.js';
import { emptyResults, mergeResults, type Results, resultOf } from '../../shared/domain/storage/results.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { putOnce } from '../common/write-once.js';
import type { PhaseOutcome } from '../restore-phase/restore-phase.js';
import { restoreVolumeResults } from '../restore-volumes/volume-results.js';
import { hookReport } from './hook-results.js';

export interface FinalizedRestore {
  readonly name: string;
  readonly phase: 'Completed' | 'PartiallyFailed';
  readonly items: number;
  readonly created: number;
  readonly updated: number;
  readonly skipped: number;
  readonly failed: number;
  readonly errors: number;
  readonly warnings: number;
  /** Velero `status.hookStatus`: post-restore exec hooks attempted and failed. */
  readonly hooksAttempted: number;
  readonly hooksFailed: number;
}

export async function finalizeRestore(
  input: { run: RestoreRun },
  deps: { store: ObjectStore; clock: Clock },
): Promise<FinalizedRestore> {
  const { run } = input;
  const keys = restoreKeys(run.name);
  const work = restoreWorkKeys(run);
  let results: Results = emptyResults;
  const log: LogEvent[] = [];
  const list: Record<string, string[]> = {};
  const totals = { created: 0, updated: 0, skipped: 0, failed: 0 };
  // The volume steps' log lines and results, and the restore's volume info.
  const volumes = await restoreVolumeResults({ store: deps.store, run });
  log.push(...volumes.log);
  results = mergeResults(results, volumes.results);
  // One outcome per chunk (`<phase>-<chunk>`, a retried chunk rewrote its own), read in parallel
  // and taken in key order, which is restore order.
  const read = pLimit(16);
  const chunks = await Promise.all(
    (await deps.store.list(work.outcomesDir)).map((key) =>
      read(async () => {
        const raw = await deps.store.get(key);
        return raw ? (JSON.parse(gunzipSync(raw).toString('utf8')) as PhaseOutcome) : undefined;
      }),
    ),
  );
  for (const chunk of chunks) {
    if (!chunk) continue;
    log.push(...chunk.log);
    for (const o of chunk.outcomes) {
      totals[o.result]++;
      const entry = `${o.namespace ? `${o.namespace}/` : ''}${o.name}(${o.result})`;
      const listKey = `${o.apiVersion}/${o.kind}`;
      list[listKey] = [...(list[listKey] ?? []), entry];
      const scope = o.namespace ? { namespace: o.namespace } : ('cluster' as const);
      for (const message of o.errors ?? []) {
        results = mergeResults(results, {
          errors: resultOf({ scope, message: `${o.kind} ${o.name}: ${message}` }),
          warnings: {},
        });
      }
      for (const message of o.warnings ?? []) {
        results = mergeResults(results, {
          errors: {},
          warnings: resultOf({ scope, message: `${o.kind} ${o.name}: ${message}` }),
        });
      }
      if (o.result === 'failed') {
        results = mergeResults(results, {
          errors: resultOf({ scope, message: `${o.kind} ${o.name}: ${o.message ?? 'failed'}` }),
          warnings: {},
        });
      } else if (o.result === 'skipped' && o.message?.includes('differs')) {
        results = mergeResults(results, {
          errors: {},
          warnings: resultOf({ scope, message: `${o.kind} ${o.name}: ${o.message}` }),
        });
      }
    }
  }
  // The restored pods' exec hooks, after the items (Velero's finalizer waits for them last).
  const hooks = await hookReport({ store: deps.store, run, time: deps.clock.now().toISOString() });
  log.push(...hooks.log);
  results = mergeResults(results, hooks.results);
  const errors = log.filter((e) => e.level === 'error').length;
  const warnings = log.filter((e) => e.level === 'warning').length;
  const phase = errors > 0 ? 'PartiallyFailed' : 'Completed';
  const completedAt = deps.clock.now();
  log.push({
    time: completedAt.toISOString(),
    level: 'info',
    msg: `Restore ${phase}`,
    fields: { restore: run.name, backup: run.backupName },
  });

  const json = { contentType: 'application/json' };
  const gz = (v: unknown): Buffer => gzipSync(JSON.stringify(v));
  const sorted = Object.fromEntries(
    Object.keys(list)
      .sort()
      .map((k) => [k, (list[k] ?? []).sort()]),
  );
  await putOnce(deps.store, keys.logs, gzipSync(`${log.map(formatLogLine).join('\n')}\n`), {
    contentType: 'application/gzip',
  });
  await putOnce(deps.store, keys.results, gz(results), json);
  await putOnce(deps.store, keys.resourceList, gz(sorted), json);
  await putOnce(deps.store, keys.itemOperations, gz([]), json);
  await putOnce(deps.store, keys.volumeInfo, gz(volumes.infos), json);
  const items = totals.created + totals.updated + totals.skipped + totals.failed;
  const status = {
    apiVersion: 'velero.io/v1',
    kind: 'Restore',
    metadata: { name: run.name, namespace: 'velero', creationTimestamp: rfc3339(new Date(run.startedAt)) },
    spec: { backupName: run.backupName },
    status: {
      phase,
      startTimestamp: rfc3339(new Date(run.startedAt)),
      completionTimestamp: rfc3339(completedAt),
      progress: { totalItems: items, itemsRestored: totals.created + totals.updated },
      ...(errors ? { errors } : {}),
      ...(warnings ? { warnings } : {}),
      hookStatus: hooks.hookStatus,
    },
  };
  await putOnce(deps.store, keys.status, JSON.stringify(status, null, 2), json);
  return { name: run.name, phase, items, ...totals, errors, warnings, ...hooks.hookStatus };
}
