/**
 * A writer's lease: an object under `leases/` saying "this writer may have loaded the index and
 * may deduplicate against any pack it lists". Garbage collection deletes no pack a live lease
 * could have seen (docs/repository-format.md, "Garbage collection"). Renewed on a timer while the
 * writer lives; a writer that failed to renew in time considers its lease lost for good and refuses
 * to let a manifest be written (RepositoryLeaseLost), since a collector may have judged it dead.
 */
import { randomBytes } from 'node:crypto';
import type { WriterLease } from '../../contracts/repository.js';
import { RepositoryLeaseLost } from '../../domain/errors.js';
import { repositoryKeys } from '../../domain/storage/keys.js';
import type { Clock } from '../../ports/clock.js';
import type { ObjectStore } from '../../ports/object-store.js';

export class WriterLeaseHandle {
  readonly writerId = randomBytes(16).toString('hex');
  private expiresAt = 0;
  private startedAt = '';
  private lost = false;
  private released = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly store: ObjectStore;
  private readonly clock: Clock;
  private readonly ttlMs: number;

  constructor(options: { store: ObjectStore; clock: Clock; ttlMs: number }) {
    this.store = options.store;
    this.clock = options.clock;
    this.ttlMs = options.ttlMs;
  }

  /** Time before expiry at which the writer stops trusting its lease. */
  private get marginMs(): number {
    return Math.floor(this.ttlMs / 5);
  }

  private async put(signal?: AbortSignal): Promise<void> {
    const now = this.clock.now().getTime();
    const expiresAt = now + this.ttlMs;
    const lease: WriterLease = {
      writerId: this.writerId,
      startedAt: this.startedAt,
      expiresAt: new Date(expiresAt).toISOString(),
    };
    await this.store.put(repositoryKeys.lease(this.writerId), JSON.stringify(lease), {
      contentType: 'application/json',
      signal,
    });
    this.expiresAt = expiresAt;
  }

  async acquire(signal?: AbortSignal): Promise<void> {
    this.startedAt = this.clock.now().toISOString();
    await this.put(signal);
    this.timer = setInterval(
      () => void this.renew().catch(() => undefined),
      Math.max(1000, Math.floor(this.ttlMs / 4)),
    );
    this.timer.unref();
  }

  private expired(): boolean {
    return this.clock.now().getTime() > this.expiresAt - this.marginMs;
  }

  /** Renews unless already lost; a lease that lapsed before renewal stays lost. */
  async renew(signal?: AbortSignal): Promise<void> {
    if (this.released || this.lost) return;
    if (this.expired()) {
      this.lost = true;
      return;
    }
    await this.put(signal);
  }

  /**
   * Put less than a tenth of its time ago: it has nine tenths left, far more than the margin, so
   * a step about to rely on it needs no renewal (a run's flush and manifest come back to back).
   */
  private fresh(): boolean {
    return this.clock.now().getTime() - (this.expiresAt - this.ttlMs) < Math.floor(this.ttlMs / 10);
  }

  /** Renews (unless just renewed), then throws RepositoryLeaseLost if the lease lapsed at any point. */
  async assertHeld(signal?: AbortSignal): Promise<void> {
    if (this.released) return;
    if (!this.fresh()) await this.renew(signal).catch(() => undefined);
    if (this.lost || this.expired()) {
      this.lost = true;
      throw new RepositoryLeaseLost(this.writerId);
    }
  }

  isActive(): boolean {
    return this.expiresAt > 0 && !this.released;
  }

  async release(signal?: AbortSignal): Promise<void> {
    if (this.released) return;
    this.released = true;
    if (this.timer) clearInterval(this.timer);
    if (this.expiresAt > 0) await this.store.delete(repositoryKeys.lease(this.writerId), { signal });
  }
}
