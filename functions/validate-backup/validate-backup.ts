/**
 * ValidateBackup: checks the request (every problem by field path), resolves its resource
 * policy (inline, or a ConfigMap read from the cluster; its includeExcludePolicy only beside the
 * scoped resource filters, as Velero requires), refuses a name that is taken, claims
 * the name for this run, and stores the request and the workers' volume settings as working
 * data. Invalid input is an outcome, not an exception: the state machine turns it into
 * FailedValidation.
 */

import {
  includeExcludePolicyProblems,
  validateBackupRequest,
} from '../../shared/contracts/backup-request.js';
import type { BackupRun, ValidationOutcome } from '../../shared/contracts/backup-run.js';
import { rejectedRequest } from '../../shared/contracts/kubernetes.js';
import { DEFAULT_TTL_MS } from '../../shared/domain/backup/plan.js';
import { parseDuration } from '../../shared/domain/kubernetes/duration.js';
import { backupKeys, backupWorkKeys } from '../../shared/domain/storage/keys.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { claimName } from '../common/name-claim.js';
import { type ClusterReader, resolveResourcePolicy, volumeSettingsOf } from './resource-policy.js';

export interface ValidateBackupDeps {
  readonly store: ObjectStore;
  readonly clock: Clock;
  readonly itemBlocksTimeoutSeconds: number;
  /** The backed-up cluster by the request's name, to read a resource policy ConfigMap from. */
  readonly clusterNamed?: (name: string) => Promise<ClusterReader>;
  readonly signal?: AbortSignal;
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

  const claim = await claimName({
    store: deps.store,
    key: keys.claim,
    runId: input.runId,
    startedAt: deps.clock.now(),
  });
  if (claim.taken) return rejected([taken]);
  const run = runOf({ request, runId: input.runId, startedAt: claim.startedAt, deps });
  // Stored on every attempt: an earlier attempt of this run may have stopped before storing it.
  await deps.store.put(backupWorkKeys(run).request, JSON.stringify(request), {
    contentType: 'application/json',
  });
  await deps.store.put(
    backupWorkKeys(run).volumeSettings,
    JSON.stringify(volumeSettingsOf(request, policy.value)),
    { contentType: 'application/json' },
  );
  return { valid: true, run };
}

function runOf(options: {
  request: { cluster: string; backup: { metadata: { name: string }; spec: { ttl?: string | undefined } } };
  runId: string;
  startedAt: Date;
  deps: ValidateBackupDeps;
}): BackupRun {
  const { request, runId, startedAt, deps } = options;
  const ttlMs = parseTtl(request.backup.spec.ttl);
  return {
    name: request.backup.metadata.name,
    cluster: request.cluster,
    runId,
    startedAt: startedAt.toISOString(),
    expiration: new Date(startedAt.getTime() + ttlMs).toISOString(),
    itemBlocksTimeoutSeconds: deps.itemBlocksTimeoutSeconds,
  };
}

function parseTtl(ttl: string | undefined): number {
  return ttl ? (parseDuration(ttl) ?? DEFAULT_TTL_MS) : DEFAULT_TTL_MS;
}
