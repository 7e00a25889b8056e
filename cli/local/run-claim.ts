/**
 * A local run's hold on its name: once ValidateBackup or ValidateRestore has claimed it, the
 * claim's lease is renewed while this process runs the execution, and no longer once it ends or
 * dies, so a later command recognises a killed run's name as abandoned.
 */
import { type ClaimKeeper, keepClaimAlive } from '../../functions/common/name-claim.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';

/**
 * A local run's lease: renewed every third of it; a killed run's name is judged after it. 30 s,
 * or `LIFEBOAT_CLAIM_LEASE_SECONDS` (tests that kill a run set it short).
 */
export const LOCAL_CLAIM_LEASE_SECONDS = leaseFromEnvironment(process.env.LIFEBOAT_CLAIM_LEASE_SECONDS) ?? 30;

function leaseFromEnvironment(value: string | undefined): number | undefined {
  const seconds = value === undefined ? Number.NaN : Number(value);
  return Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
}

export class RunClaim {
  private keeper: ClaimKeeper | undefined;

  constructor(private readonly options: { store: ObjectStore; clock: Clock; leaseSeconds: number }) {}

  get leaseSeconds(): number {
    return this.options.leaseSeconds;
  }

  /** Starts renewing the claim at `key` for the run (once; a retried validation changes nothing). */
  hold(key: string, runId: string): void {
    this.keeper ??= keepClaimAlive({ ...this.options, key, runId });
  }

  /** Stops renewing: the run has ended, its outcome recorded. */
  async release(): Promise<void> {
    await this.keeper?.stop();
    this.keeper = undefined;
  }
}
