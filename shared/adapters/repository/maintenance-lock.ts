/**
 * The repository's maintenance lock: one garbage collection or index compaction at a time (two
 * rewriting the index at once could bring back entries of deleted packs). Taken with ifNoneMatch;
 * a lock past its expiry (its holder died) is broken, and a lock the holder no longer finds its
 * own stops it before anything destructive.
 */
import { randomBytes } from 'node:crypto';
import { type MaintenanceLock, maintenanceLockSchema } from '../../contracts/repository.js';
import { AlreadyExists, RepositoryBusy } from '../../domain/errors.js';
import { repositoryKeys } from '../../domain/storage/keys.js';
import type { Clock } from '../../ports/clock.js';
import type { ObjectStore } from '../../ports/object-store.js';
import { readJson } from './json-object.js';

export class MaintenanceLockHandle {
  readonly owner = randomBytes(16).toString('hex');
  private readonly store: ObjectStore;
  private readonly clock: Clock;
  private readonly ttlMs: number;
  private readonly skewMs: number;
  private readonly purpose: string;

  constructor(options: { store: ObjectStore; clock: Clock; ttlMs: number; skewMs: number; purpose: string }) {
    this.store = options.store;
    this.clock = options.clock;
    this.ttlMs = options.ttlMs;
    this.skewMs = options.skewMs;
    this.purpose = options.purpose;
  }

  private body(): string {
    const lock: MaintenanceLock = {
      owner: this.owner,
      purpose: this.purpose,
      expiresAt: new Date(this.clock.now().getTime() + this.ttlMs).toISOString(),
    };
    return JSON.stringify(lock);
  }

  private read(signal?: AbortSignal): Promise<MaintenanceLock | undefined> {
    return readJson({
      store: this.store,
      key: repositoryKeys.gcLock,
      parse: (v) => maintenanceLockSchema.parse(v),
      signal,
    });
  }

  /** Takes the lock, or RepositoryBusy when someone else holds it; `false` with `tryOnly`. */
  async acquire(options: { signal?: AbortSignal; tryOnly?: boolean } = {}): Promise<boolean> {
    const { signal } = options;
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await this.store.put(repositoryKeys.gcLock, this.body(), { ifNoneMatch: true, signal });
        return true;
      } catch (error) {
        if (!(error instanceof AlreadyExists)) throw error;
      }
      const held = await this.read(signal);
      if (held && this.clock.now().getTime() <= Date.parse(held.expiresAt) + this.skewMs) {
        if (options.tryOnly) return false;
        throw new RepositoryBusy(`${held.purpose} holds the maintenance lock until ${held.expiresAt}`);
      }
      // Its holder stopped without releasing it: break it, then take it the normal way.
      await this.store.delete(repositoryKeys.gcLock, { signal });
    }
    if (options.tryOnly) return false;
    throw new RepositoryBusy('the maintenance lock was taken by another process meanwhile');
  }

  /** Renews the lock before a destructive step; RepositoryBusy if another process took it. */
  async confirm(signal?: AbortSignal): Promise<void> {
    const held = await this.read(signal);
    if (held?.owner !== this.owner)
      throw new RepositoryBusy('the maintenance lock was lost to another process');
    await this.store.put(repositoryKeys.gcLock, this.body(), { signal });
  }

  async release(signal?: AbortSignal): Promise<void> {
    const held = await this.read(signal).catch(() => undefined);
    if (held?.owner === this.owner) await this.store.delete(repositoryKeys.gcLock, { signal });
  }
}
