/**
 * Recognising a restore whose run died: its name is claimed, it has no record, and the claim's
 * lease ran out. The restore is then recorded Failed with the reason and the counts of what it
 * had restored (RecordRestoreFailure's record), so `restore describe` finds it; its name stays
 * taken. Called by a new run of the same name and by `restore describe`. Never touches a restore
 * whose run is alive.
 */

import type { NameClaim } from '../../shared/contracts/name-claim.js';
import { type RestoreRun, restoreRun } from '../../shared/contracts/restore-run.js';
import { restoreKeys } from '../../shared/domain/storage/keys.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { claimStanding, markClaimAbandoned, readClaim } from '../common/name-claim.js';
import { recordRestoreFailure } from './record-restore-failure.js';

export type RestoreNameState =
  | { readonly state: 'free' }
  | { readonly state: 'running'; readonly claim: NameClaim }
  /** The restore's record is there (finished, failed, or just recorded as abandoned). */
  | { readonly state: 'stored'; readonly abandoned?: string };

export async function settleAbandonedRestore(
  input: { name: string },
  deps: { store: ObjectStore; clock: Clock },
): Promise<RestoreNameState> {
  const { store } = deps;
  const keys = restoreKeys(input.name);
  if (await store.exists(keys.status)) return { state: 'stored' };
  const claim = await readClaim(store, keys.claim);
  if (!claim) return { state: 'free' };
  const standing = claimStanding(claim, deps.clock.now());
  if (standing.live) return { state: 'running', claim };
  await markClaimAbandoned({ store, key: keys.claim, claim, reason: standing.reason, now: deps.clock.now() });
  const run = runOfClaim(input.name, claim);
  await recordRestoreFailure({ run, failure: { Error: 'RunAbandoned', Cause: standing.reason } }, deps);
  await store.removeTemporaries?.(keys.dir);
  return { state: 'stored', abandoned: standing.reason };
}

/** The run the claim names; a claim older than leases has none: rebuilt from what it holds. */
function runOfClaim(name: string, claim: NameClaim): RestoreRun {
  const parsed = restoreRun.safeParse(claim.run);
  if (parsed.success && parsed.data.name === name) return parsed.data;
  const started = Date.parse(claim.startedAt);
  return {
    name,
    backupName: '',
    cluster: '',
    runId: claim.runId,
    startedAt: new Date(Number.isFinite(started) ? started : 0).toISOString(),
    dryRun: false,
  };
}
