/**
 * RecordBackupFailure: the state machine's Catch. Writes the backup's log and a
 * `velero-backup.json` with phase Failed and the reason, so the failure is visible where the
 * backup would have been. Writes only what is absent; never a partial tarball.
 */
import { gzipSync } from 'node:zlib';
import { backupRequest } from '../../shared/contracts/backup-request.js';
import type { BackupRun } from '../../shared/contracts/backup-run.js';
import { backupDocument, CLUSTER_ANNOTATION } from '../../shared/domain/storage/backup-document.js';
import {
  RESOURCE_TIMEOUT_ANNOTATION,
  storedBackupSpec,
  VELERO_SERVER_DEFAULTS,
} from '../../shared/domain/storage/backup-spec.js';
import { backupKeys, backupWorkKeys } from '../../shared/domain/storage/keys.js';
import { formatLogLine } from '../../shared/domain/storage/log.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { removeWorkData } from '../common/work-data.js';
import { putOnce } from '../common/write-once.js';
import { readCollectLog } from '../finalize-backup/finalize-backup.js';

export interface RecordBackupFailureDeps {
  readonly store: ObjectStore;
  readonly clock: Clock;
}

/** Step Functions puts a Lambda error's JSON in Cause; keep its message, never a stack trace. */
export function reasonOf(error: string, cause: string | undefined): string {
  if (!cause) return error;
  try {
    const parsed = JSON.parse(cause) as { errorMessage?: unknown };
    if (typeof parsed.errorMessage === 'string') return `${error}: ${parsed.errorMessage}`;
  } catch {
    // a plain message
  }
  return `${error}: ${cause.split('\n')[0]}`;
}

export async function recordBackupFailure(
  input: { run: BackupRun; failure: { Error?: string; Cause?: string } },
  deps: RecordBackupFailureDeps,
): Promise<{ name: string; phase: 'Failed'; failureReason: string }> {
  const { run } = input;
  const keys = backupKeys(run.name);
  const failureReason = reasonOf(input.failure.Error ?? 'Unknown', input.failure.Cause);
  const now = deps.clock.now();
  const log = await readCollectLog(deps.store, run);
  log.push({
    time: now.toISOString(),
    level: 'error',
    msg: 'Backup failed',
    fields: { backup: run.name, reason: failureReason },
  });
  await putOnce(deps.store, keys.logs, gzipSync(`${log.map(formatLogLine).join('\n')}\n`), {
    contentType: 'application/gzip',
  });
  const raw = await deps.store.get(backupWorkKeys(run).request);
  const request = raw ? backupRequest.safeParse(JSON.parse(Buffer.from(raw).toString('utf8'))) : undefined;
  const spec = request?.success ? (request.data.backup.spec as Record<string, unknown>) : {};
  const document = backupDocument({
    name: run.name,
    labels: {
      ...(request?.success ? (request.data.backup.metadata.labels ?? {}) : {}),
      'velero.io/storage-location': 'default',
    },
    annotations: {
      ...(request?.success ? (request.data.backup.metadata.annotations ?? {}) : {}),
      [RESOURCE_TIMEOUT_ANNOTATION]: VELERO_SERVER_DEFAULTS.resourceTimeout,
      [CLUSTER_ANNOTATION]: run.cluster,
    },
    spec: storedBackupSpec(spec),
    startedAt: new Date(run.startedAt),
    completedAt: now,
    expiration: new Date(run.expiration),
    phase: 'Failed',
    errors: 1,
    failureReason,
  });
  await putOnce(deps.store, keys.metadata, JSON.stringify(document, null, 2), {
    contentType: 'application/json',
  });
  await removeWorkData({ store: deps.store, dir: backupWorkKeys(run).dir });
  return { name: run.name, phase: 'Failed', failureReason };
}
