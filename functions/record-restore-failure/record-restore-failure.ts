/**
 * RecordRestoreFailure: the restore state machine's Catch. A restore that fails as a whole (a
 * hostile archive, a step failing for good) is recorded like a finished one, with phase Failed,
 * the reason, and the counts and results of what it restored before it stopped, so
 * `restore describe` finds it. When even that cannot be read (the working data is what broke), a
 * record with the reason alone is written. Writes only what is absent; a dry run writes nothing.
 */
import { gzipSync } from 'node:zlib';
import type { RestoreRun } from '../../shared/contracts/restore-run.js';
import { restoreKeys } from '../../shared/domain/storage/keys.js';
import { formatLogLine } from '../../shared/domain/storage/log.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { putOnce } from '../common/write-once.js';
import { finalizeRestore, restoreStatus } from '../finalize-restore/finalize-restore.js';
import { reasonOf } from '../record-backup-failure/record-backup-failure.js';

export interface RecordedRestoreFailure {
  readonly name: string;
  readonly phase: 'Failed';
  readonly failureReason: string;
  /** Items the restore had created or updated before it failed. */
  readonly restored: number;
  readonly failed: number;
}

export async function recordRestoreFailure(
  input: { run: RestoreRun; failure: { Error?: string; Cause?: string } },
  deps: { store: ObjectStore; clock: Clock },
): Promise<RecordedRestoreFailure> {
  const { run } = input;
  const failureReason = reasonOf(input.failure.Error ?? 'Unknown', input.failure.Cause);
  if (run.dryRun) return { name: run.name, phase: 'Failed', failureReason, restored: 0, failed: 0 };
  try {
    const done = await finalizeRestore({ run, failureReason }, deps);
    return {
      name: run.name,
      phase: 'Failed',
      failureReason,
      restored: done.created + done.updated,
      failed: done.failed,
    };
  } catch {
    await recordReasonAlone({ run, failureReason, deps });
    return { name: run.name, phase: 'Failed', failureReason, restored: 0, failed: 0 };
  }
}

/** The record and log of a restore whose working data cannot be read: the reason alone. */
async function recordReasonAlone(options: {
  run: RestoreRun;
  failureReason: string;
  deps: { store: ObjectStore; clock: Clock };
}): Promise<void> {
  const { run, failureReason, deps } = options;
  const keys = restoreKeys(run.name);
  const now = deps.clock.now();
  const line = formatLogLine({
    time: now.toISOString(),
    level: 'error',
    msg: 'Restore Failed',
    fields: { restore: run.name, backup: run.backupName, reason: failureReason },
  });
  await putOnce(deps.store, keys.logs, gzipSync(`${line}\n`), { contentType: 'application/gzip' });
  const status = restoreStatus({
    run,
    phase: 'Failed',
    completedAt: now,
    counts: { items: 0, restored: 0, errors: 1, warnings: 0 },
    hookStatus: { hooksAttempted: 0, hooksFailed: 0 },
    failureReason,
  });
  await putOnce(deps.store, keys.status, JSON.stringify(status, null, 2), {
    contentType: 'application/json',
  });
}
