/**
 * Claiming a backup or restore name for one run: a create-if-absent write, so two runs can never
 * use the same name. The claim carries the run's identity and a lease the run renews while it
 * lives (every step in AWS, a timer under `lifeboat --local`); a claim whose lease ran out belongs
 * to a run that died (killed, out of disk, crashed) and is recognised as abandoned by whoever
 * looks next. A retried step of the same run finds its own claim and goes on, with the start time
 * the first attempt recorded. Never deletes a claim: only deleting the backup or restore frees
 * its name. A dry run asks `nameTaken` instead: the same answer for a new run, and nothing
 * written.
 */
import { type NameClaim, nameClaim } from '../../shared/contracts/name-claim.js';
import { AlreadyExists, RunAbandoned } from '../../shared/domain/errors.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';

/** A deployed run's lease: longer than any gap between two of its steps' renewals. */
export const DEFAULT_CLAIM_LEASE_SECONDS = 3600;

export type ClaimResult =
  | { readonly taken: false; readonly startedAt: Date }
  | { readonly taken: true; readonly claim: NameClaim };

const JSON_OBJECT = { contentType: 'application/json' } as const;

function encode(claim: NameClaim): string {
  return JSON.stringify(claim);
}

export async function claimName(options: {
  store: ObjectStore;
  key: string;
  runId: string;
  startedAt: Date;
  leaseSeconds?: number;
  /** The run, kept in the claim so its failure can be recorded by whoever finds it dead. */
  run?: Record<string, unknown>;
}): Promise<ClaimResult> {
  const claim: NameClaim = {
    runId: options.runId,
    startedAt: options.startedAt.toISOString(),
    heartbeatAt: options.startedAt.toISOString(),
    leaseSeconds: options.leaseSeconds ?? DEFAULT_CLAIM_LEASE_SECONDS,
    ...(options.run ? { run: options.run } : {}),
  };
  try {
    await options.store.put(options.key, encode(claim), { ifNoneMatch: true, ...JSON_OBJECT });
    return { taken: false, startedAt: options.startedAt };
  } catch (error) {
    if (!(error instanceof AlreadyExists)) throw error;
  }
  const existing = await readClaim(options.store, options.key);
  if (!existing || existing.runId !== options.runId || existing.abandoned)
    return { taken: true, claim: existing ?? unreadableClaim() };
  return { taken: false, startedAt: new Date(existing.startedAt) };
}

/** A claim that is there but cannot be read: held by no run anyone can name. */
function unreadableClaim(): NameClaim {
  return { runId: 'unknown', startedAt: new Date(0).toISOString() };
}

/** The claim at `key`; a claim that is not a claim's JSON reads as held by an unknown, dead run. */
export async function readClaim(
  store: ObjectStore,
  key: string,
  signal?: AbortSignal,
): Promise<NameClaim | undefined> {
  const raw = await store.get(key, signal ? { signal } : {});
  if (!raw) return undefined;
  try {
    const parsed = nameClaim.safeParse(JSON.parse(Buffer.from(raw).toString('utf8')));
    return parsed.success ? parsed.data : unreadableClaim();
  } catch {
    return unreadableClaim();
  }
}

export type ClaimStanding =
  | { readonly live: true }
  | { readonly live: false; readonly reason: string; readonly lastSeen: string };

/**
 * Whether the claim still stands for a live run: renewed within its lease and never found dead.
 * The reason says what a later reader saw, in the words of Velero's restart rule (a backup left
 * in progress by a server restart is marked Failed).
 */
export function claimStanding(claim: NameClaim, now: Date): ClaimStanding {
  const lastSeen = claim.heartbeatAt ?? claim.startedAt;
  if (claim.abandoned) return { live: false, reason: claim.abandoned.reason, lastSeen };
  const lease = claim.leaseSeconds ?? DEFAULT_CLAIM_LEASE_SECONDS;
  const last = Date.parse(lastSeen);
  if (Number.isFinite(last) && now.getTime() <= last + lease * 1000) return { live: true };
  return {
    live: false,
    lastSeen,
    reason:
      `run ${claim.runId} stopped renewing its claim on the name at ${lastSeen} (lease ${lease} s) ` +
      'and never finished: its process was killed, ran out of disk space or crashed',
  };
}

/** Records that the claim's run is dead, so the run, should it come back, writes nothing more. */
export async function markClaimAbandoned(options: {
  store: ObjectStore;
  key: string;
  claim: NameClaim;
  reason: string;
  now: Date;
}): Promise<void> {
  const { claim } = options;
  if (claim.abandoned) return;
  const marked: NameClaim = {
    ...claim,
    abandoned: { at: options.now.toISOString(), reason: options.reason },
  };
  await options.store.put(options.key, encode(marked), JSON_OBJECT);
}

/**
 * Renews the run's claim. A claim a reader marked abandoned (and so recorded the run's failure),
 * or one held by another run, stops the run with RunAbandoned. A lease that ran out unseen (a
 * laptop asleep, a long wait) is simply renewed: the run is alive and nobody judged it. No claim
 * at all (a test's bare store, or a dry run) is left alone.
 */
export async function renewClaim(options: {
  store: ObjectStore;
  key: string;
  runId: string;
  clock: Clock;
  signal?: AbortSignal;
}): Promise<void> {
  const { store, key, runId } = options;
  const claim = await readClaim(store, key, options.signal);
  if (!claim) return;
  if (claim.runId !== runId)
    throw new RunAbandoned(`the name is claimed by run ${claim.runId}, not ${runId}`);
  if (claim.abandoned) throw new RunAbandoned(claim.abandoned.reason);
  const renewed: NameClaim = { ...claim, heartbeatAt: options.clock.now().toISOString() };
  await store.put(key, encode(renewed), {
    ...JSON_OBJECT,
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

/** A renewal timer for the life of a local run; `stop` ends it and waits for a renewal under way. */
export interface ClaimKeeper {
  stop(): Promise<void>;
}

/** Renews the claim every third of its lease until stopped; a failed renewal is tried again next time. */
export function keepClaimAlive(options: {
  store: ObjectStore;
  key: string;
  runId: string;
  clock: Clock;
  leaseSeconds: number;
}): ClaimKeeper {
  let pending: Promise<void> = Promise.resolve();
  let stopped = false;
  const timer = setInterval(
    () => {
      if (stopped) return;
      pending = renewClaim(options).catch(() => undefined);
    },
    Math.max(100, (options.leaseSeconds * 1000) / 3),
  );
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await pending;
    },
  };
}

/** Whether a new run would find the name taken, as `claimName` would, writing nothing. */
export async function nameTaken(options: { store: ObjectStore; key: string }): Promise<boolean> {
  return options.store.exists(options.key);
}
