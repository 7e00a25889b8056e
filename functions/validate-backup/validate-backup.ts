/**
 * ValidateBackup: checks the request (every problem by field path), resolves its resource
 * policy (inline, or a ConfigMap read from the cluster; its includeExcludePolicy only beside the
 * scoped resource filters, as Velero requires), refuses a name that is taken, claims
 * the name for this run, and stores the request and the workers' volume settings as working
 * data. Invalid input is an outcome, not an exception: the state machine turns it into
 * FailedValidation.
 */

import {
  type BackupRequest,
  includeExcludePolicyProblems,
  validateBackupRequest,
} from '../../shared/contracts/backup-request.js';
import type { BackupRun, ValidationOutcome } from '../../shared/contracts/backup-run.js';
import { rejectedRequest } from '../../shared/contracts/kubernetes.js';
import { DEFAULT_TTL_MS } from '../../shared/domain/backup/plan.js';
import type { FieldProblem } from '../../shared/domain/errors.js';
import { parseDuration } from '../../shared/domain/kubernetes/duration.js';
import { backupKeys, backupWorkKeys } from '../../shared/domain/storage/keys.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { claimName } from '../common/name-claim.js';
import { settleAbandonedBackup } from '../record-backup-failure/abandoned-backup.js';
import { type ClusterReader, resolveResourcePolicy, volumeSettingsOf } from './resource-policy.js';

export interface ValidateBackupDeps {
  readonly store: ObjectStore;
  readonly clock: Clock;
  readonly itemBlocksTimeoutSeconds: number;
  /** The backed-up cluster by the request's name, to read a resource policy ConfigMap from. */
  readonly clusterNamed?: (name: string) => Promise<ClusterReader>;
  readonly signal?: AbortSignal;
  /** The lease the run's claim on its name carries (default: a deployed run's). */
  readonly claimLeaseSeconds?: number;
}

const rejected = rejectedRequest;

export async function validateBackup(
  input: { request: unknown; runId: string },
  deps: ValidateBackupDeps,
): Promise<ValidationOutcome> {
  const checked = validateBackupRequest(input.request);
  if (!checked.ok) return rejected(checked.problems);
  const request = checked.value;
  const name = request.backup.metadata.name;
  const keys = backupKeys(name);
  const taken = { path: 'backup.metadata.name', message: `a backup named "${name}" already exists` };
  if (await deps.store.exists(keys.metadata)) return rejected([taken]);
  const policy = await resolveResourcePolicy(request, {
    ...(deps.clusterNamed ? { clusterNamed: deps.clusterNamed } : {}),
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  if (!policy.ok) return rejected(policy.problems);
  const filterProblems = includeExcludePolicyProblems(request.backup.spec, policy.value);
  if (filterProblems.length > 0) return rejected(filterProblems);

  const run = runOf({ request, runId: input.runId, startedAt: deps.clock.now(), deps });
  if (!run)
    return rejected([{ path: 'backup.spec.ttl', message: 'puts the expiration past the year 275760' }]);
  const claim = await claimName({
    store: deps.store,
    key: keys.claim,
    runId: input.runId,
    startedAt: new Date(run.startedAt),
    ...(deps.claimLeaseSeconds ? { leaseSeconds: deps.claimLeaseSeconds } : {}),
    run,
  });
  if (claim.taken) return rejected([await takenProblem({ name, deps })]);
  return storeWorkingData({ run: retriedFrom(run, claim.startedAt), request, policy: policy.value, deps });
}

/** The request and the workers' volume settings, as working data of the run. */
async function storeWorkingData(options: {
  run: BackupRun;
  request: BackupRequest;
  policy: Parameters<typeof volumeSettingsOf>[1];
  deps: ValidateBackupDeps;
}): Promise<ValidationOutcome> {
  const { run, request, deps } = options;
  // Stored on every attempt: an earlier attempt of this run may have stopped before storing it.
  await deps.store.put(backupWorkKeys(run).request, JSON.stringify(request), {
    contentType: 'application/json',
  });
  await deps.store.put(
    backupWorkKeys(run).volumeSettings,
    JSON.stringify(volumeSettingsOf(request, options.policy)),
    { contentType: 'application/json' },
  );
  return { valid: true, run };
}

/** The run, or undefined when its TTL puts the expiration past what a date can hold. */
function runOf(options: {
  request: { cluster: string; backup: { metadata: { name: string }; spec: { ttl?: string | undefined } } };
  runId: string;
  startedAt: Date;
  deps: ValidateBackupDeps;
}): BackupRun | undefined {
  const { request, runId, startedAt, deps } = options;
  const expiration = new Date(startedAt.getTime() + parseTtl(request.backup.spec.ttl));
  if (!Number.isFinite(expiration.getTime())) return undefined;
  return {
    name: request.backup.metadata.name,
    cluster: request.cluster,
    runId,
    startedAt: startedAt.toISOString(),
    expiration: expiration.toISOString(),
    itemBlocksTimeoutSeconds: deps.itemBlocksTimeoutSeconds,
  };
}

/** The run as its first attempt claimed it: that attempt's start time, and so its expiration. */
function retriedFrom(run: BackupRun, startedAt: Date): BackupRun {
  if (startedAt.toISOString() === run.startedAt) return run;
  const ttlMs = Date.parse(run.expiration) - Date.parse(run.startedAt);
  return {
    ...run,
    startedAt: startedAt.toISOString(),
    expiration: new Date(startedAt.getTime() + ttlMs).toISOString(),
  };
}

/**
 * Why the name is taken: a backup of that name exists, is still running, or its run died; a
 * dead run's backup is recorded Failed now, so it can be listed and deleted.
 */
async function takenProblem(options: { name: string; deps: ValidateBackupDeps }): Promise<FieldProblem> {
  const { name, deps } = options;
  const path = 'backup.metadata.name';
  const found = await settleAbandonedBackup({ name }, deps);
  if (found.state === 'running')
    return {
      path,
      message: `a backup named "${name}" already exists and is in progress (run ${found.claim.runId})`,
    };
  if (found.state === 'stored' && found.abandoned)
    return {
      path,
      message: `a backup named "${name}" already exists: its run died and it is now recorded Failed (${found.abandoned}); delete it to use the name again`,
    };
  if (found.state === 'deleting')
    return { path, message: `backup "${name}" is being deleted: run its deletion again to finish it` };
  return { path, message: `a backup named "${name}" already exists` };
}

function parseTtl(ttl: string | undefined): number {
  return ttl ? (parseDuration(ttl) ?? DEFAULT_TTL_MS) : DEFAULT_TTL_MS;
}
