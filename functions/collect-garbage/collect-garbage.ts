/**
 * A garbage collection run, as Velero's GC controller and Lifeboat's retention decide it
 * (shared/domain/schedules/garbage.ts): every stored backup that is expired or not kept by its
 * Schedule's retention is deleted through the delete workflow (objects, snapshots, repository
 * data), one at a time; what is skipped and why, and what failed, go into the report written to
 * the store. A dry run decides the same and deletes nothing. A failed deletion is tried again by
 * the next run (the delete workflow's request is retried). Never deletes a backup itself.
 */
import { cronOf, retentionOf } from '../../shared/contracts/schedule.js';
import type { GarbageCandidate, ScheduleRetention } from '../../shared/domain/schedules/garbage.js';
import { selectGarbage } from '../../shared/domain/schedules/garbage.js';
import { SCHEDULE_NAME_LABEL } from '../../shared/domain/schedules/naming.js';
import type { BackupDocument } from '../../shared/domain/storage/backup-document.js';
import {
  backupKeys,
  GARBAGE_DRY_RUN_REPORT_KEY,
  GARBAGE_REPORT_KEY,
} from '../../shared/domain/storage/keys.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { Executions } from '../../shared/ports/executions.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { backupStatus } from '../api/backup-status.js';
import { deleteBackup } from '../api/deletions.js';
import { storedBackupNames } from '../common/stored-records.js';
import { listSchedules } from '../schedules/schedules.js';

export interface GarbageDeps {
  readonly store: ObjectStore;
  readonly executions: Executions;
  readonly clock: Clock;
  readonly signal?: AbortSignal;
}

export interface GarbageReport {
  readonly apiVersion: 'lifeboat.io/v1';
  readonly kind: 'GarbageCollectionReport';
  readonly dryRun: boolean;
  readonly time: string;
  /** Deletions started through the delete workflow (a dry run: the ones it would start). */
  readonly deleted: readonly { readonly name: string; readonly reasons: readonly string[] }[];
  readonly skipped: readonly { readonly name: string; readonly reason: string }[];
  readonly failures: readonly { readonly name: string; readonly error: string }[];
}

export async function collectGarbage(
  input: { readonly dryRun: boolean },
  deps: GarbageDeps,
): Promise<GarbageReport> {
  const now = deps.clock.now();
  const [backups, retention] = await Promise.all([candidates(deps), retentionPolicies(deps)]);
  const decision = selectGarbage({ backups: backups.candidates, retention, now });
  const failures = [...backups.failures];
  const deleted: { name: string; reasons: readonly string[] }[] = [];
  for (const chosen of decision.delete) {
    if (input.dryRun) {
      deleted.push(chosen);
      continue;
    }
    const failure = await startDeletion(chosen.name, deps);
    if (failure) failures.push({ name: chosen.name, error: failure });
    else deleted.push(chosen);
  }
  const report: GarbageReport = {
    apiVersion: 'lifeboat.io/v1',
    kind: 'GarbageCollectionReport',
    dryRun: input.dryRun,
    time: now.toISOString(),
    deleted,
    skipped: decision.skipped,
    failures,
  };
  await deps.store.put(
    input.dryRun ? GARBAGE_DRY_RUN_REPORT_KEY : GARBAGE_REPORT_KEY,
    JSON.stringify(report),
    {
      contentType: 'application/json',
      ...(deps.signal ? { signal: deps.signal } : {}),
    },
  );
  return report;
}

/** Starts the delete workflow for a backup: undefined once started, else why not. */
async function startDeletion(name: string, deps: GarbageDeps): Promise<string | undefined> {
  try {
    const answer = await deleteBackup(name, deps);
    if (answer.statusCode === 202) return undefined;
    const body = JSON.parse(answer.body) as { message?: string };
    return body.message ?? `the deletion was refused (${answer.statusCode})`;
  } catch (error) {
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  }
}

/** Every stored backup as GC sees it; one that cannot be read is a failure, not a stop. */
async function candidates(
  deps: GarbageDeps,
): Promise<{ candidates: GarbageCandidate[]; failures: { name: string; error: string }[] }> {
  const found: GarbageCandidate[] = [];
  const failures: { name: string; error: string }[] = [];
  for (const name of await storedBackupNames(deps.store)) {
    try {
      const document = await backupStatus(name, deps);
      if (document) found.push(await candidateOf(document, deps));
    } catch (error) {
      failures.push({
        name,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      });
    }
  }
  return { candidates: found, failures };
}

async function candidateOf(document: BackupDocument, deps: GarbageDeps): Promise<GarbageCandidate> {
  const { metadata, status } = document;
  const retained = await deps.store.retentionOf?.(backupKeys(metadata.name).metadata);
  const schedule = metadata.labels?.[SCHEDULE_NAME_LABEL];
  return {
    name: metadata.name,
    phase: status.phase,
    takenAt: new Date(metadata.creationTimestamp || status.startTimestamp),
    deleting: status.phase === 'Deleting',
    ...(status.expiration ? { expiration: new Date(status.expiration) } : {}),
    ...(schedule ? { schedule } : {}),
    ...(retained ? { retainedUntil: retained.until } : {}),
  };
}

/** The retention policy of each Schedule that has one, in its cron's time zone. */
async function retentionPolicies(deps: GarbageDeps): Promise<Map<string, ScheduleRetention>> {
  const policies = new Map<string, ScheduleRetention>();
  for (const { schedule } of await listSchedules(deps)) {
    const retention = retentionOf(schedule);
    if (!retention.ok || !retention.value) continue;
    const cron = cronOf(schedule);
    policies.set(schedule.metadata.name, {
      policy: retention.value,
      timeZone: cron.kind === 'cron' ? cron.timeZone : 'UTC',
    });
  }
  return policies;
}
