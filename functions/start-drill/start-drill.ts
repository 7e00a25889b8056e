/**
 * StartDrill: checks a DR drill's request (every problem by field path), finds its backup (by
 * name, or the schedule's latest Completed one), claims the drill's name for this run, records
 * the drill InProgress, and hands on the Restore request the drill runs: the whole backup, into
 * the target cluster, under the drill's namespace mappings, named as the drill. Invalid input is
 * an outcome, not an exception; run again with the same run id, it starts the same drill.
 */
import { readBackupDocument } from '../../shared/adapters/stored-file-reader.js';
import {
  DEFAULT_READY_TIMEOUT,
  type DrillRequest,
  type DrillRun,
  validateDrillRequest,
} from '../../shared/contracts/drill.js';
import { rejectedRequest } from '../../shared/contracts/kubernetes.js';
import { recoveryPointSeconds } from '../../shared/domain/drills/report.js';
import { StoredFileUnreadable } from '../../shared/domain/errors.js';
import { parseDuration } from '../../shared/domain/kubernetes/duration.js';
import type { BackupDocument } from '../../shared/domain/storage/backup-document.js';
import { drillKeys, restoreKeys } from '../../shared/domain/storage/keys.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { backupOfRun, writeDrillReport } from '../common/drill-records.js';
import { claimName } from '../common/name-claim.js';
import { latestBackupOfSchedule } from '../common/schedule-backups.js';

export interface StartDrillDeps {
  readonly store: ObjectStore;
  readonly clock: Clock;
  readonly signal?: AbortSignal;
  /** Seconds between two looks at the restored workloads (default 10). */
  readonly pollSeconds?: number;
}

export type StartDrillOutcome =
  | { readonly valid: true; readonly run: DrillRun; readonly restore: Record<string, unknown> }
  | ReturnType<typeof rejectedRequest>;

/** A drill's claim never runs out: a drill's name, like a backup's, is used once. */
const DRILL_CLAIM_SECONDS = 100 * 365 * 24 * 3600;

/** Backups a drill may restore: a partial one is a real DR case too; the report says what came back. */
const RESTORABLE = new Set(['Completed', 'PartiallyFailed']);

async function findBackup(
  request: DrillRequest,
  deps: StartDrillDeps,
): Promise<{ backup: BackupDocument } | { problem: { path: string; message: string } }> {
  const spec = request.drill.spec;
  const signal = deps.signal ? { signal: deps.signal } : {};
  if (spec.scheduleName) {
    const backup = await latestBackupOfSchedule(deps.store, spec.scheduleName, signal);
    return backup
      ? { backup }
      : {
          problem: {
            path: 'drill.spec.scheduleName',
            message: `schedule "${spec.scheduleName}" has no Completed backup`,
          },
        };
  }
  const path = 'drill.spec.backupName';
  try {
    const backup = await readBackupDocument(deps.store, spec.backupName ?? '', signal);
    if (!backup) return { problem: { path, message: `backup "${spec.backupName}" does not exist` } };
    if (!RESTORABLE.has(backup.status.phase))
      return {
        problem: { path, message: `backup "${spec.backupName}" is ${backup.status.phase}, not restorable` },
      };
    return { backup };
  } catch (error) {
    if (error instanceof StoredFileUnreadable)
      return { problem: { path, message: `backup "${spec.backupName}" cannot be read: ${error.message}` } };
    throw error;
  }
}

export async function startDrill(
  input: { request: unknown; runId: string },
  deps: StartDrillDeps,
): Promise<StartDrillOutcome> {
  const checked = validateDrillRequest(input.request);
  if (!checked.ok) return rejectedRequest(checked.problems);
  const request = checked.value;
  const name = request.drill.metadata.name;
  const found = await findBackup(request, deps);
  if ('problem' in found) return rejectedRequest([found.problem]);
  // The drill's restore is named as the drill: a restore of that name would be another's.
  const nameProblem = {
    path: 'drill.metadata.name',
    message: `a drill or restore named "${name}" already exists`,
  };
  // Before the claim: a name refused for its restore stays free for the drill of that restore's owner.
  if (await deps.store.exists(restoreKeys(name).status)) return rejectedRequest([nameProblem]);
  const claim = await claimName({
    store: deps.store,
    key: drillKeys({ name }).claim,
    runId: input.runId,
    startedAt: deps.clock.now(),
    leaseSeconds: DRILL_CLAIM_SECONDS,
  });
  if (claim.taken) return rejectedRequest([nameProblem]);
  const run = drillRunOf({
    request,
    backup: found.backup,
    runId: input.runId,
    startedAt: claim.startedAt,
    pollSeconds: deps.pollSeconds ?? 10,
  });
  await writeDrillReport(deps.store, {
    name,
    phase: 'InProgress',
    cluster: run.cluster,
    backup: backupOfRun(run),
    restore: { name: run.restoreName, phase: 'New' },
    namespaceMapping: run.namespaceMapping,
    startedAt: run.startedAt,
    rpoSeconds: recoveryPointSeconds({ backupStartedAt: run.backupStartedAt, drillStartedAt: run.startedAt }),
    items: { checked: 0, notChecked: 0, waitedOn: 0 },
    mismatches: [],
    volumes: [],
    ...(run.firedBySchedule ? { firedBySchedule: run.firedBySchedule } : {}),
  });
  return { valid: true, run, restore: restoreRequestOf(run) };
}

function drillRunOf(options: {
  request: DrillRequest;
  backup: BackupDocument;
  runId: string;
  startedAt: Date;
  pollSeconds: number;
}): DrillRun {
  const { request, backup, startedAt } = options;
  const spec = request.drill.spec;
  const waitMs = parseDuration(spec.readyTimeout ?? DEFAULT_READY_TIMEOUT) ?? 0;
  return {
    name: request.drill.metadata.name,
    runId: options.runId,
    cluster: request.cluster,
    backupName: backup.metadata.name,
    ...(spec.scheduleName ? { scheduleName: spec.scheduleName } : {}),
    ...(request.firedBySchedule ? { firedBySchedule: request.firedBySchedule } : {}),
    backupStartedAt: backup.status.startTimestamp,
    namespaceMapping: { ...(spec.namespaceMapping ?? {}) },
    startedAt: startedAt.toISOString(),
    readyDeadline: new Date(startedAt.getTime() + waitMs).toISOString(),
    restoreName: request.drill.metadata.name,
    pollSeconds: options.pollSeconds,
  };
}

/** The Restore the drill runs: everything the backup holds, under the drill's mappings. */
export function restoreRequestOf(run: DrillRun): Record<string, unknown> {
  const mapped = Object.keys(run.namespaceMapping).length > 0;
  return {
    cluster: run.cluster,
    restore: {
      apiVersion: 'velero.io/v1',
      kind: 'Restore',
      metadata: { name: run.restoreName, labels: { 'lifeboat.io/drill': run.name } },
      spec: { backupName: run.backupName, ...(mapped ? { namespaceMapping: run.namespaceMapping } : {}) },
    },
  };
}
