/**
 * FinalizeRestore: writes what Velero keeps under `restores/<name>/` (log, results, resource list
 * with each item's outcome, item operations, volume info) and Lifeboat's record of the restore
 * with its phase, counts and hook status; the restored pods' exec hooks are in the log and the
 * results (a failed hook is an error: PartiallyFailed), and so are PlanRestore's warnings. Each
 * object is written only if absent. RecordRestoreFailure writes the same with phase Failed and
 * the reason.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import pLimit from 'p-limit';
import { readStoredJson } from '../../shared/adapters/stored-file-reader.js';
import { storedRestoreRecord, storedRestoreResourceList } from '../../shared/contracts/restore-files.js';
import type { ItemOutcome, RestoreRun } from '../../shared/contracts/restore-run.js';
import { rfc3339 } from '../../shared/domain/storage/backup-document.js';
import { restoreKeys, restoreWorkKeys } from '../../shared/domain/storage/keys.js';
import { formatLogLine, type LogEvent } from '../../shared/domain/storage/log.js';
import { emptyResults, mergeResults, type Results, resultOf } from '../../shared/domain/storage/results.js';
import { restoreFile } from '../../shared/domain/storage/stored-files.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { removeWorkData } from '../common/work-data.js';
import { putOnce } from '../common/write-once.js';
import type { PhaseOutcome } from '../restore-phase/restore-phase.js';
import { restoreVolumeResults } from '../restore-volumes/volume-results.js';
import { type HookReport, hookReport } from './hook-results.js';

export interface FinalizedRestore {
  readonly name: string;
  readonly phase: 'Completed' | 'PartiallyFailed' | 'Failed';
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
  input: {
    run: RestoreRun;
    /** Why the restore failed as a whole (RecordRestoreFailure): phase Failed, what was done counted. */
    failureReason?: string;
  },
  deps: { store: ObjectStore; clock: Clock },
): Promise<FinalizedRestore> {
  const { run } = input;
  // The record is written last: a retry after it only finishes the working data's removal.
  const earlier = await earlierOutcome(deps.store, run);
  if (earlier) {
    await removeWorkData({ store: deps.store, dir: restoreWorkKeys(run).dir });
    return earlier;
  }
  // The volume steps' log lines and results, and the restore's volume info.
  const volumes = await restoreVolumeResults({ store: deps.store, run });
  const planned = await planWarnings({ store: deps.store, run });
  const report: RestoreReport = {
    log: [...planned.log, ...volumes.log],
    results: mergeResults(planned.results, volumes.results),
    list: {},
    totals: { created: 0, updated: 0, skipped: 0, failed: 0 },
  };
  for (const chunk of await readChunkOutcomes({ store: deps.store, run })) {
    if (!chunk) continue;
    report.log.push(...chunk.log);
    for (const outcome of chunk.outcomes) addItemOutcome(report, outcome);
  }
  // The restored pods' exec hooks, after the items (Velero's finalizer waits for them last).
  const hooks = await hookReport({ store: deps.store, run, time: deps.clock.now().toISOString() });
  report.log.push(...hooks.log);
  report.results = mergeResults(report.results, hooks.results);
  const completedAt = deps.clock.now();
  const phase = closeLog({ report, run, completedAt, failureReason: input.failureReason });
  const errors = report.log.filter((e) => e.level === 'error').length;
  const warnings = report.log.filter((e) => e.level === 'warning').length;
  await writeRestoreFiles({ store: deps.store, run, report, volumeInfos: volumes.infos });
  const { totals } = report;
  const items = totals.created + totals.updated + totals.skipped + totals.failed;
  const status = restoreStatus({
    run,
    phase,
    completedAt,
    counts: { items, restored: totals.created + totals.updated, errors, warnings },
    hookStatus: hooks.hookStatus,
    ...(input.failureReason ? { failureReason: input.failureReason } : {}),
  });
  await putOnce(deps.store, restoreKeys(run.name).status, JSON.stringify(status, null, 2), JSON_OBJECT);
  await removeWorkData({ store: deps.store, dir: restoreWorkKeys(run).dir });
  return { name: run.name, phase, items, ...totals, errors, warnings, ...hooks.hookStatus };
}

/** What a finished attempt returned: its record, with the totals counted from its resource list. */
async function earlierOutcome(store: ObjectStore, run: RestoreRun): Promise<FinalizedRestore | undefined> {
  const record = await readStoredJson(store, restoreFile(run.name, 'status'), {
    schema: storedRestoreRecord,
    shape: 'a velero.io/v1 Restore',
  });
  if (!record) return undefined;
  const list = await readStoredJson(store, restoreFile(run.name, 'resourceList'), {
    schema: storedRestoreResourceList,
    shape: "a restore's resource list",
  });
  const totals = { created: 0, updated: 0, skipped: 0, failed: 0 };
  for (const entry of Object.values(list ?? {}).flat()) {
    const result = /\((created|updated|skipped|failed)\)$/.exec(entry)?.[1] as
      | keyof typeof totals
      | undefined;
    if (result) totals[result]++;
  }
  const { status } = record;
  return {
    name: run.name,
    phase: status.phase === 'PartiallyFailed' || status.phase === 'Failed' ? status.phase : 'Completed',
    items: status.progress?.totalItems ?? 0,
    ...totals,
    errors: status.errors ?? 0,
    warnings: status.warnings ?? 0,
    hooksAttempted: status.hookStatus?.hooksAttempted ?? 0,
    hooksFailed: status.hookStatus?.hooksFailed ?? 0,
  };
}

/** The log's last line: the restore's phase, and the reason it failed, if it did; the phase. */
function closeLog(options: {
  report: RestoreReport;
  run: RestoreRun;
  completedAt: Date;
  failureReason: string | undefined;
}): FinalizedRestore['phase'] {
  const { report, run, failureReason } = options;
  const fields = { restore: run.name, backup: run.backupName };
  const time = options.completedAt.toISOString();
  if (failureReason !== undefined) {
    report.log.push({
      time,
      level: 'error',
      msg: 'Restore Failed',
      fields: { ...fields, reason: failureReason },
    });
    return 'Failed';
  }
  const phase = report.log.some((e) => e.level === 'error') ? 'PartiallyFailed' : 'Completed';
  report.log.push({ time, level: 'info', msg: `Restore ${phase}`, fields });
  return phase;
}

/** PlanRestore's log; its warnings (parts of the request that restored nothing) as results too. */
async function planWarnings(options: {
  store: ObjectStore;
  run: RestoreRun;
}): Promise<{ log: LogEvent[]; results: Results }> {
  const raw = await options.store.get(restoreWorkKeys(options.run).planLog);
  const log = raw ? (JSON.parse(gunzipSync(raw).toString('utf8')) as LogEvent[]) : [];
  let results = emptyResults;
  // The plan's info lines (items Velero never restores) go into the log only.
  for (const event of log.filter((e) => e.level === 'warning')) {
    const namespace = event.fields?.namespace;
    const scope = typeof namespace === 'string' && namespace ? { namespace } : ('cluster' as const);
    results = mergeResults(results, { errors: {}, warnings: resultOf({ scope, message: event.msg }) });
  }
  return { log, results };
}

/** What the restore's files are made of, gathered in restore order. */
interface RestoreReport {
  readonly log: LogEvent[];
  results: Results;
  /** Velero's resource list: `<apiVersion>/<kind>` to `<namespace>/<name>(<result>)` entries. */
  readonly list: Record<string, string[]>;
  readonly totals: Record<ItemOutcome['result'], number>;
}

const JSON_OBJECT = { contentType: 'application/json' };

/**
 * One outcome per chunk (`<phase>-<chunk>`, a retried chunk rewrote its own), read in parallel
 * and taken in key order, which is restore order.
 */
async function readChunkOutcomes(options: {
  store: ObjectStore;
  run: RestoreRun;
}): Promise<(PhaseOutcome | undefined)[]> {
  const { store } = options;
  const read = pLimit(16);
  return Promise.all(
    (await store.list(restoreWorkKeys(options.run).outcomesDir)).map((key) =>
      read(async () => {
        const raw = await store.get(key);
        return raw ? (JSON.parse(gunzipSync(raw).toString('utf8')) as PhaseOutcome) : undefined;
      }),
    ),
  );
}

/** An item's count, its resource list entry, and its problems as results of its scope. */
function addItemOutcome(report: RestoreReport, o: ItemOutcome): void {
  report.totals[o.result]++;
  const entry = `${o.namespace ? `${o.namespace}/` : ''}${o.name}(${o.result})`;
  const listKey = `${o.apiVersion}/${o.kind}`;
  report.list[listKey] = [...(report.list[listKey] ?? []), entry];
  const scope = o.namespace ? { namespace: o.namespace } : ('cluster' as const);
  const error = (message: string): void => {
    report.results = mergeResults(report.results, { errors: resultOf({ scope, message }), warnings: {} });
  };
  const warning = (message: string): void => {
    report.results = mergeResults(report.results, { errors: {}, warnings: resultOf({ scope, message }) });
  };
  for (const message of o.errors ?? []) error(`${o.kind} ${o.name}: ${message}`);
  for (const message of o.warnings ?? []) warning(`${o.kind} ${o.name}: ${message}`);
  if (o.result === 'failed') error(`${o.kind} ${o.name}: ${o.message ?? 'failed'}`);
}

/** What Velero keeps under `restores/<name>/` besides the restore itself, each written once. */
async function writeRestoreFiles(options: {
  store: ObjectStore;
  run: RestoreRun;
  report: RestoreReport;
  volumeInfos: readonly unknown[];
}): Promise<void> {
  const { store, report } = options;
  const keys = restoreKeys(options.run.name);
  const gz = (v: unknown): Buffer => gzipSync(JSON.stringify(v));
  const sorted = Object.fromEntries(
    Object.keys(report.list)
      .sort()
      .map((k) => [k, (report.list[k] ?? []).sort()]),
  );
  await putOnce(store, keys.logs, gzipSync(`${report.log.map(formatLogLine).join('\n')}\n`), {
    contentType: 'application/gzip',
  });
  await putOnce(store, keys.results, gz(report.results), JSON_OBJECT);
  await putOnce(store, keys.resourceList, gz(sorted), JSON_OBJECT);
  await putOnce(store, keys.itemOperations, gz([]), JSON_OBJECT);
  await putOnce(store, keys.volumeInfo, gz(options.volumeInfos), JSON_OBJECT);
}

/** Lifeboat's record of the restore, shaped as Velero's Restore object. */
export function restoreStatus(options: {
  run: RestoreRun;
  phase: FinalizedRestore['phase'];
  completedAt: Date;
  counts: { items: number; restored: number; errors: number; warnings: number };
  hookStatus: HookReport['hookStatus'];
  failureReason?: string;
}): Record<string, unknown> {
  const { run, counts } = options;
  return {
    apiVersion: 'velero.io/v1',
    kind: 'Restore',
    metadata: { name: run.name, namespace: 'velero', creationTimestamp: rfc3339(new Date(run.startedAt)) },
    spec: { backupName: run.backupName },
    status: {
      phase: options.phase,
      startTimestamp: rfc3339(new Date(run.startedAt)),
      completionTimestamp: rfc3339(options.completedAt),
      progress: { totalItems: counts.items, itemsRestored: counts.restored },
      ...(counts.errors ? { errors: counts.errors } : {}),
      ...(counts.warnings ? { warnings: counts.warnings } : {}),
      ...(options.failureReason ? { failureReason: options.failureReason } : {}),
      hookStatus: options.hookStatus,
    },
  };
}
