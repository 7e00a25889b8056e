/**
 * Recognising a backup whose run died: its name is claimed, no `velero-backup.json` exists, and
 * the claim's lease ran out. As Velero marks a backup left in progress by a server restart Failed,
 * the backup is then recorded Failed with the reason (RecordBackupFailure's record), so it is
 * listed, described and deletable; its name stays taken until it is deleted. Called by whoever
 * looks at the name next: a new run of the same name, `backup get`, `describe`, `delete`.
 * Never touches a backup whose run is alive, nor one whose deletion has started.
 */
import { type BackupRun, backupRun } from '../../shared/contracts/backup-run.js';
import type { NameClaim } from '../../shared/contracts/name-claim.js';
import { DEFAULT_TTL_MS } from '../../shared/domain/backup/plan.js';
import { type BackupDocument, backupDocument } from '../../shared/domain/storage/backup-document.js';
import { BACKUP_CLAIMS_DIR, backupKeys, backupWorkKeys } from '../../shared/domain/storage/keys.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { claimStanding, markClaimAbandoned, readClaim } from '../common/name-claim.js';
import { recordBackupFailure } from './record-backup-failure.js';

export type BackupNameState =
  /** Nothing holds the name. */
  | { readonly state: 'free' }
  /** A live run holds it: the backup is in progress. */
  | { readonly state: 'running'; readonly claim: NameClaim }
  /** `velero-backup.json` is there (complete, failed, or just recorded as abandoned). */
  | { readonly state: 'stored'; readonly abandoned?: string }
  /** A deletion started and did not finish: only running it again frees the name. */
  | { readonly state: 'deleting' };

export async function settleAbandonedBackup(
  input: { name: string },
  deps: { store: ObjectStore; clock: Clock; signal?: AbortSignal },
): Promise<BackupNameState> {
  const { store } = deps;
  const keys = backupKeys(input.name);
  const withSignal = deps.signal ? { signal: deps.signal } : {};
  if (await store.exists(keys.metadata, withSignal)) return { state: 'stored' };
  const claim = await readClaim(store, keys.claim, deps.signal);
  if (!claim) return { state: 'free' };
  if (await store.exists(keys.deletion, withSignal)) return { state: 'deleting' };
  const standing = claimStanding(claim, deps.clock.now());
  if (standing.live) return { state: 'running', claim };
  await markClaimAbandoned({ store, key: keys.claim, claim, reason: standing.reason, now: deps.clock.now() });
  const run = runOfClaim(input.name, claim);
  await recordBackupFailure({ run, failure: { Error: 'RunAbandoned', Cause: standing.reason } }, deps);
  // What the dead run was writing when it stopped (a directory store's temporary files).
  await store.removeTemporaries?.(keys.dir);
  await store.removeTemporaries?.(backupWorkKeys(run).dir);
  return { state: 'stored', abandoned: standing.reason };
}

/** The run the claim names; a claim older than leases has none: rebuilt from what it holds. */
function runOfClaim(name: string, claim: NameClaim): BackupRun {
  const parsed = backupRun.safeParse(claim.run);
  if (parsed.success && parsed.data.name === name) return parsed.data;
  const started = Date.parse(claim.startedAt);
  const startedAt = Number.isFinite(started) ? new Date(started) : new Date(0);
  return {
    name,
    cluster: '',
    runId: claim.runId,
    startedAt: startedAt.toISOString(),
    expiration: new Date(startedAt.getTime() + DEFAULT_TTL_MS).toISOString(),
    itemBlocksTimeoutSeconds: 1,
  };
}

/** Every backup name held by a claim: the backups running, dead, or stored. */
async function claimedBackupNames(store: ObjectStore): Promise<string[]> {
  return (await store.list(BACKUP_CLAIMS_DIR))
    .map((key) => key.slice(BACKUP_CLAIMS_DIR.length))
    .filter((rest) => rest.endsWith('.json') && !rest.includes('/'))
    .map((rest) => rest.slice(0, -'.json'.length));
}

/**
 * Settles every claimed backup with no `velero-backup.json` (a dead run's is recorded Failed),
 * and returns those still running as InProgress documents (Velero lists them too; not stored).
 */
export async function settleClaimedBackups(deps: {
  store: ObjectStore;
  clock: Clock;
}): Promise<BackupDocument[]> {
  const running: BackupDocument[] = [];
  for (const name of await claimedBackupNames(deps.store)) {
    const found = await settleAbandonedBackup({ name }, deps);
    if (found.state === 'running') running.push(inProgressDocument(name, found.claim));
  }
  return running;
}

/** What a running backup's `velero-backup.json` will say until it is written: InProgress. */
export function inProgressDocument(name: string, claim: NameClaim): BackupDocument {
  const run = runOfClaim(name, claim);
  return backupDocument({
    name,
    spec: {},
    startedAt: new Date(run.startedAt),
    expiration: new Date(run.expiration),
    phase: 'InProgress',
  });
}
