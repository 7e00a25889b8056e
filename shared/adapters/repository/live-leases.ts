/**
 * The writers garbage collection must wait for: those whose lease under `leases/` is live (or
 * unreadable), read once a step (docs/repository-format.md, "Garbage collection"). Leases that
 * expired, their writers dead without releasing them, are deleted on the way.
 * Never: an unreadable lease taken for an expired one (blocking a deletion is the safe mistake).
 */
import { writerLeaseSchema } from '../../contracts/repository.js';
import { leaseIsLive } from '../../domain/repository/gc.js';
import { repositoryKeyId, repositoryKeys } from '../../domain/storage/keys.js';
import { mapBounded } from './bounded.js';
import { readJson } from './json-object.js';
import type { RepositorySession } from './repository-session.js';

const READ_CONCURRENCY = 8;

/** The ids of the writers whose lease is live now (unreadable ones by their key). */
export async function liveLeases(options: {
  session: RepositorySession;
  skewMs: number;
  signal?: AbortSignal;
}): Promise<Set<string>> {
  const { session, signal } = options;
  const keys = await session.store.list(repositoryKeys.leasesDir, { signal });
  const leases = await mapBounded(keys, READ_CONCURRENCY, (key) =>
    readJson({ store: session.store, key, parse: (v) => writerLeaseSchema.parse(v), signal }).catch(
      () => undefined,
    ),
  );
  const live = new Set<string>();
  const now = session.clock.now();
  const expired: string[] = [];
  keys.forEach((key, i) => {
    const lease = leases[i];
    // An unreadable lease counts as live: blocking a deletion is the safe mistake.
    if (!lease || leaseIsLive({ expiresAt: lease.expiresAt, now, skewMs: options.skewMs }))
      live.add(lease?.writerId ?? repositoryKeyId(key));
    else expired.push(key);
  });
  // Leases of writers that died without releasing them.
  for (const key of expired) await session.store.delete(key, { signal });
  return live;
}
