/**
 * The restore routes: create (the same validation ValidateRestore runs first, then the restore
 * state machine under a name-derived execution name), list, get (New, InProgress, or the record
 * FinalizeRestore wrote), describe (warnings and errors with their text, the resource list), a
 * link to the log, and delete: the record and `restores/<name>/` only, never what the restore
 * created in a cluster (as `velero restore delete`).
 */
import { parseListQuery } from '../../shared/contracts/api.js';
import { validateRestoreRequest } from '../../shared/contracts/restore-request.js';
import { rfc3339 } from '../../shared/domain/storage/backup-document.js';
import { restoreKeys } from '../../shared/domain/storage/keys.js';
import type { Execution } from '../../shared/ports/executions.js';
import { executionName, generationOf, nextGeneration } from '../common/execution-names.js';
import { readClaim } from '../common/name-claim.js';
import {
  type RestoreDocument,
  readRestore,
  readRestoreRecord,
  storedRestoreNames,
} from '../common/stored-records.js';
import { clusterProblem } from './backups.js';
import { type ApiDeps, LINK_SECONDS } from './deps.js';
import { type ApiEvent, type ApiResult, bodyOf, conflict, failure, invalid, json, notFound } from './http.js';
import { mergedNames, page } from './listing.js';
import { startOnce } from './starts.js';

const CLUSTER_LABEL = 'lifeboat.io/cluster';

export async function createRestore(event: ApiEvent, deps: ApiDeps): Promise<ApiResult> {
  const body = bodyOf(event);
  if (!body.ok) return body.result;
  const checked = validateRestoreRequest(body.value);
  if (!checked.ok) return invalid(checked.problems);
  const clusterProblems = clusterProblem(checked.value.cluster, deps.clusters);
  if (clusterProblems.length > 0) return invalid(clusterProblems);
  const name = checked.value.restore.metadata.name;
  const keys = restoreKeys(name);
  const outcome = await startOnce({
    workflow: 'restore',
    name,
    request: body.value,
    takenKeys: [keys.status, keys.claim],
    store: deps.store,
    executions: deps.executions,
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  if (outcome === 'taken') return conflict('AlreadyExists', `a restore named "${name}" already exists`);
  return json(202, await restoreStatus(name, deps));
}

interface RequestedRestore {
  readonly cluster?: string;
  readonly restore?: { readonly spec?: { readonly backupName?: string } };
}

/** A restore as the API shows it: its record once written, else what its execution says. */
export async function restoreStatus(name: string, deps: ApiDeps): Promise<RestoreDocument | undefined> {
  const keys = restoreKeys(name);
  const recorded = await readRestoreRecord(deps.store, name);
  if (recorded) return recorded;
  const generation = await generationOf({ store: deps.store, kind: 'restores', name });
  const execution = await deps.executions.describe({
    workflow: 'restore',
    name: executionName({ workflow: 'restore', name, generation }),
  });
  const claim = await readClaim(deps.store, keys.claim);
  if (!execution && !claim) return undefined;
  const requested = execution ? requestOf(execution.input) : undefined;
  const startedAt = claim ? new Date(claim.startedAt) : (execution?.startDate ?? new Date());
  return {
    apiVersion: 'velero.io/v1',
    kind: 'Restore',
    metadata: {
      name,
      namespace: 'velero',
      creationTimestamp: rfc3339(startedAt),
      ...(requested?.cluster ? { labels: { [CLUSTER_LABEL]: requested.cluster } } : {}),
    },
    spec: {
      ...(requested?.restore?.spec?.backupName ? { backupName: requested.restore.spec.backupName } : {}),
    },
    status: { startTimestamp: rfc3339(startedAt), ...phaseOf(execution, claim !== undefined) },
  };
}

function phaseOf(execution: Execution | undefined, claimed: boolean): RestoreDocument['status'] {
  if (execution && execution.status !== 'RUNNING' && execution.status !== 'SUCCEEDED') {
    const completionTimestamp = rfc3339(execution.stopDate ?? new Date());
    if (execution.error === 'FailedValidation')
      return {
        phase: 'FailedValidation',
        completionTimestamp,
        validationErrors: (execution.cause ?? '').split('\n').filter(Boolean),
      };
    return {
      phase: 'Failed',
      completionTimestamp,
      failureReason: `${execution.error ?? execution.status}: ${execution.cause ?? ''}`,
    };
  }
  return { phase: claimed ? 'InProgress' : 'New' };
}

function requestOf(input: string): RequestedRestore | undefined {
  try {
    return (JSON.parse(input) as { request?: RequestedRestore }).request;
  } catch {
    return undefined;
  }
}

export async function listRestores(event: ApiEvent, deps: ApiDeps): Promise<ApiResult> {
  const query = parseListQuery(event.queryStringParameters ?? {});
  if (!query.ok) return invalid(query.problems);
  const claimsDir = restoreKeys('x').claim.replace(/x\.json$/, '');
  const running = (await deps.store.list(claimsDir)).map((k) => k.slice(claimsDir.length, -'.json'.length));
  const list = await page<RestoreDocument>({
    kind: 'RestoreList',
    names: mergedNames(await storedRestoreNames(deps.store), running),
    query: query.value,
    objectOf: (name) => restoreStatus(name, deps),
    clusterOf: (restore) => restore.metadata?.labels?.[CLUSTER_LABEL],
  });
  return json(200, list);
}

export async function getRestore(name: string, deps: ApiDeps): Promise<ApiResult> {
  const status = await restoreStatus(name, deps);
  return status ? json(200, status) : notFound(`restore "${name}"`);
}

export async function describeRestore(name: string, deps: ApiDeps): Promise<ApiResult> {
  const stored = await readRestore(deps.store, name);
  if (stored) return json(200, stored);
  const status = await restoreStatus(name, deps);
  return status ? json(200, { document: status }) : notFound(`restore "${name}"`);
}

export async function restoreLogs(name: string, deps: ApiDeps): Promise<ApiResult> {
  const key = restoreKeys(name).logs;
  if (!(await deps.store.exists(key))) {
    const status = await restoreStatus(name, deps);
    if (!status) return notFound(`restore "${name}"`);
    return failure({
      status: 404,
      code: 'NotFound',
      message: `restore "${name}" has no log (phase ${status.status.phase ?? 'New'})`,
    });
  }
  const url = await deps.links.link({ key, expiresInSeconds: LINK_SECONDS });
  return json(200, { url, expiresAt: new Date(Date.now() + LINK_SECONDS * 1000).toISOString() });
}

/** Deletes the restore's record and files (not what it restored); a running restore is refused. */
export async function deleteRestore(name: string, deps: ApiDeps): Promise<ApiResult> {
  const status = await restoreStatus(name, deps);
  if (!status) return notFound(`restore "${name}"`);
  if (status.status.phase === 'New' || status.status.phase === 'InProgress')
    return conflict('RestoreInProgress', `restore "${name}" is still in progress: it cannot be deleted yet`);
  const keys = restoreKeys(name);
  for (const key of await deps.store.list(keys.dir)) await deps.store.delete(key);
  await deps.store.delete(keys.status);
  await deps.store.delete(keys.claim);
  await nextGeneration({ store: deps.store, kind: 'restores', name });
  return json(200, status);
}
