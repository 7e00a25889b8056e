/**
 * A drill's report in the store (`plugins/lifeboat/drills/<name>.json`): written InProgress when
 * the drill starts and rewritten once when it ends; read back within a size bound and checked
 * against its schema, so a broken record is named rather than shown.
 */
import { readStoredJson } from '../../shared/adapters/stored-file-reader.js';
import { storedResourceList } from '../../shared/contracts/backup-files.js';
import { type DrillRun, storedDrillReport } from '../../shared/contracts/drill.js';
import type { DrillReport } from '../../shared/domain/drills/report.js';
import { StoredFileUnreadable } from '../../shared/domain/errors.js';
import { DRILLS_DIR, drillKeys } from '../../shared/domain/storage/keys.js';
import { backupFile } from '../../shared/domain/storage/stored-files.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';

/** A report is small: names, counts, mismatches (a few thousand at most) and volumes. */
const MAX_REPORT_BYTES = 8 * 1024 * 1024;

export async function writeDrillReport(store: ObjectStore, report: DrillReport): Promise<void> {
  await store.put(drillKeys({ name: report.name }).report, JSON.stringify(report, null, 2), {
    contentType: 'application/json',
  });
}

export async function readDrillReport(
  store: ObjectStore,
  name: string,
  options: { signal?: AbortSignal } = {},
): Promise<DrillReport | undefined> {
  const key = drillKeys({ name }).report;
  const body = await store.get(key, options);
  if (!body) return undefined;
  if (body.byteLength > MAX_REPORT_BYTES)
    throw new StoredFileUnreadable({ what: 'a drill report', key }, `is more than ${MAX_REPORT_BYTES} bytes`);
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(body).toString('utf8'));
  } catch {
    throw new StoredFileUnreadable({ what: 'a drill report', key }, 'is not JSON');
  }
  const parsed = storedDrillReport.safeParse(json);
  if (!parsed.success)
    throw new StoredFileUnreadable({ what: 'a drill report', key }, 'is not a drill report');
  return parsed.data as DrillReport;
}

/** The names of the drills recorded, in name order. */
export async function drillNames(
  store: ObjectStore,
  options: { signal?: AbortSignal } = {},
): Promise<string[]> {
  return (await store.list(DRILLS_DIR, options))
    .filter((k) => k.endsWith('.json'))
    .map((k) => k.slice(DRILLS_DIR.length, -'.json'.length))
    .filter((n) => n && !n.includes('/'))
    .sort();
}

/** The drilled backup as a report names it: with its Schedule, named or the one that fired the drill. */
export function backupOfRun(run: DrillRun): { name: string; startedAt: string; schedule?: string } {
  const schedule = run.scheduleName ?? run.firedBySchedule;
  return { name: run.backupName, startedAt: run.backupStartedAt, ...(schedule ? { schedule } : {}) };
}

/** The drilled backup's resource list (what a drill expects restored); undefined when missing. */
export function drilledResourceList(store: ObjectStore, run: DrillRun, signal?: AbortSignal) {
  return readStoredJson(store, backupFile(run.backupName, 'resourceList'), {
    schema: storedResourceList,
    shape: 'a resource list',
    ...(signal ? { signal } : {}),
  });
}
