/**
 * The backup routes: create (the same validation ValidateBackup runs, then the backup state
 * machine started under a name-derived execution name), list (label selector, phase, cluster;
 * paginated), get (live progress while running), describe (the resource list, volumes, item
 * operations, warnings and errors with their text), and links to the log and the archive.
 * Never writes to the store: the workflows do.
 */
import { parseListQuery } from '../../shared/contracts/api.js';
import { validateBackupRequest } from '../../shared/contracts/backup-request.js';
import { type BackupDocument, CLUSTER_ANNOTATION } from '../../shared/domain/storage/backup-document.js';
import { backupKeys } from '../../shared/domain/storage/keys.js';
import { readBackup, storedBackupNames } from '../common/stored-records.js';
import { backupStatus } from './backup-status.js';
import { type ApiDeps, LINK_SECONDS } from './deps.js';
import { type ApiEvent, type ApiResult, bodyOf, conflict, failure, invalid, json, notFound } from './http.js';
import { mergedNames, page } from './listing.js';
import { listLocationBackups } from './locations.js';
import { startOnce } from './starts.js';

/** The cluster a request names must be one this deployment serves. */
export function clusterProblem(cluster: string, clusters: readonly string[]) {
  return clusters.includes(cluster)
    ? []
    : [
        {
          path: 'cluster',
          message: `"${cluster}" is not a cluster this deployment serves (${clusters.length ? `one of: ${clusters.join(', ')}` : 'it serves none'})`,
        },
      ];
}

export async function createBackup(event: ApiEvent, deps: ApiDeps): Promise<ApiResult> {
  const body = bodyOf(event);
  if (!body.ok) return body.result;
  const checked = validateBackupRequest(body.value);
  if (!checked.ok) return invalid(checked.problems);
  const clusterProblems = clusterProblem(checked.value.cluster, deps.clusters);
  if (clusterProblems.length > 0) return invalid(clusterProblems);
  const name = checked.value.backup.metadata.name;
  const keys = backupKeys(name);
  const outcome = await startOnce({
    workflow: 'backup',
    name,
    request: body.value,
    takenKeys: [keys.metadata, keys.claim],
    store: deps.store,
    executions: deps.executions,
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  if (outcome === 'taken') return conflict('AlreadyExists', `a backup named "${name}" already exists`);
  return json(202, await backupStatus(name, deps));
}

export async function listBackups(event: ApiEvent, deps: ApiDeps): Promise<ApiResult> {
  const query = parseListQuery(event.queryStringParameters ?? {});
  if (!query.ok) return invalid(query.problems);
  if (query.value.location !== undefined) return listLocationBackups(query.value, deps);
  const claimsDir = backupKeys('x').claim.replace(/x\.json$/, '');
  const running = (await deps.store.list(claimsDir)).map((k) => k.slice(claimsDir.length, -'.json'.length));
  const list = await page<BackupDocument>({
    kind: 'BackupList',
    names: mergedNames(await storedBackupNames(deps.store), running),
    query: query.value,
    objectOf: (name) => backupStatus(name, deps),
    clusterOf: (backup) => backup.metadata.annotations?.[CLUSTER_ANNOTATION],
  });
  return json(200, list);
}

export async function getBackup(name: string, deps: ApiDeps): Promise<ApiResult> {
  const status = await backupStatus(name, deps);
  return status ? json(200, status) : notFound(`backup "${name}"`);
}

export async function describeBackup(name: string, deps: ApiDeps): Promise<ApiResult> {
  const status = await backupStatus(name, deps);
  if (!status) return notFound(`backup "${name}"`);
  const stored = status.status.phase === 'Deleting' ? undefined : await readBackup(deps.store, name);
  return json(200, stored ?? { document: status });
}

/** A link to one of a backup's files: its log, or its archive. */
export async function backupFileLink(options: {
  readonly name: string;
  readonly file: 'logs' | 'contents';
  readonly deps: ApiDeps;
}): Promise<ApiResult> {
  const { name, file, deps } = options;
  const key = backupKeys(name)[file];
  if (!(await deps.store.exists(key))) {
    const status = await backupStatus(name, deps);
    if (!status) return notFound(`backup "${name}"`);
    return failure({
      status: 404,
      code: 'NotFound',
      message: `backup "${name}" has no ${file === 'logs' ? 'log' : 'archive'} (phase ${status.status.phase})`,
    });
  }
  const url = await deps.links.link({ key, expiresInSeconds: LINK_SECONDS });
  return json(200, { url, expiresAt: new Date(Date.now() + LINK_SECONDS * 1000).toISOString() });
}
