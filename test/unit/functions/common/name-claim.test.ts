import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import {
  claimName,
  claimStanding,
  keepClaimAlive,
  markClaimAbandoned,
  readClaim,
  renewClaim,
} from '../../../../functions/common/name-claim.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import { RunAbandoned } from '../../../../shared/domain/errors.js';

const KEY = 'plugins/lifeboat/claims/backups/nightly.json';
const at = (iso: string) => ({ now: () => new Date(iso) });

async function store(): Promise<LocalDirectoryStore> {
  return new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'claims-')));
}

describe('a name claim', () => {
  it('carries the run, its start and a lease; a retried step of the same run keeps the first start', async () => {
    const s = await store();
    const first = await claimName({
      store: s,
      key: KEY,
      runId: 'run-1',
      startedAt: new Date('2026-01-01T00:00:00Z'),
      leaseSeconds: 30,
      run: { name: 'nightly' },
    });
    expect(first).toEqual({ taken: false, startedAt: new Date('2026-01-01T00:00:00Z') });
    expect(await readClaim(s, KEY)).toEqual({
      runId: 'run-1',
      startedAt: '2026-01-01T00:00:00.000Z',
      heartbeatAt: '2026-01-01T00:00:00.000Z',
      leaseSeconds: 30,
      run: { name: 'nightly' },
    });
    const retried = await claimName({
      store: s,
      key: KEY,
      runId: 'run-1',
      startedAt: new Date('2026-01-01T00:05:00Z'),
    });
    expect(retried).toEqual({ taken: false, startedAt: new Date('2026-01-01T00:00:00Z') });
    const other = await claimName({ store: s, key: KEY, runId: 'run-2', startedAt: new Date() });
    expect(other).toMatchObject({ taken: true, claim: { runId: 'run-1' } });
  });

  it.each([
    ['renewed within its lease', '2026-01-01T00:00:29Z', true],
    ['at the end of its lease', '2026-01-01T00:00:30Z', true],
    ['past its lease', '2026-01-01T00:00:31Z', false],
  ])('stands for a live run when %s', (_, now, live) => {
    const claim = {
      runId: 'r',
      startedAt: '2026-01-01T00:00:00Z',
      heartbeatAt: '2026-01-01T00:00:00Z',
      leaseSeconds: 30,
    };
    expect(claimStanding(claim, new Date(now)).live).toBe(live);
  });

  it('says why a dead run lost it: its id, when it was last seen and its lease', () => {
    const standing = claimStanding(
      {
        runId: 'local-1',
        startedAt: '2026-01-01T00:00:00Z',
        heartbeatAt: '2026-01-01T00:01:00Z',
        leaseSeconds: 30,
      },
      new Date('2026-01-01T01:00:00Z'),
    );
    expect(standing).toEqual({
      live: false,
      lastSeen: '2026-01-01T00:01:00Z',
      reason: expect.stringMatching(/run local-1 stopped renewing .* at 2026-01-01T00:01:00Z \(lease 30 s\)/),
    });
  });

  it('reads a claim written before leases as renewed at its start, and an unreadable one as dead', async () => {
    const s = await store();
    await s.put(KEY, JSON.stringify({ runId: 'old', startedAt: '2026-01-01T00:00:00Z' }));
    const old = await readClaim(s, KEY);
    expect(old && claimStanding(old, new Date('2026-01-01T00:59:00Z')).live).toBe(true);
    expect(old && claimStanding(old, new Date('2026-01-01T01:01:00Z')).live).toBe(false);
    await s.put(KEY, 'not json');
    const broken = await readClaim(s, KEY);
    expect(broken && claimStanding(broken, new Date()).live).toBe(false);
  });

  it('is renewed by its run, and a run whose claim was found dead is stopped with RunAbandoned', async () => {
    const s = await store();
    await claimName({
      store: s,
      key: KEY,
      runId: 'run-1',
      startedAt: new Date('2026-01-01T00:00:00Z'),
      leaseSeconds: 30,
    });
    await renewClaim({ store: s, key: KEY, runId: 'run-1', clock: at('2026-01-01T00:00:20Z') });
    expect((await readClaim(s, KEY))?.heartbeatAt).toBe('2026-01-01T00:00:20.000Z');
    await expect(
      renewClaim({ store: s, key: KEY, runId: 'run-2', clock: at('2026-01-01T00:00:21Z') }),
    ).rejects.toBeInstanceOf(RunAbandoned);
    // Past its lease but judged by no one (a laptop asleep): the live run just renews it.
    await renewClaim({ store: s, key: KEY, runId: 'run-1', clock: at('2026-01-01T00:05:00Z') });
    expect((await readClaim(s, KEY))?.heartbeatAt).toBe('2026-01-01T00:05:00.000Z');
    const claim = await readClaim(s, KEY);
    if (!claim) throw new Error('the claim is gone');
    await markClaimAbandoned({
      store: s,
      key: KEY,
      claim,
      reason: 'killed',
      now: new Date('2026-01-01T00:00:22Z'),
    });
    await expect(
      renewClaim({ store: s, key: KEY, runId: 'run-1', clock: at('2026-01-01T00:00:23Z') }),
    ).rejects.toThrow('the run was given up: killed');
    // No claim at all (a bare store, a dry run): nothing to renew, nothing refused.
    await renewClaim({
      store: s,
      key: 'plugins/lifeboat/claims/backups/none.json',
      runId: 'x',
      clock: at('2026-01-01T00:00:00Z'),
    });
  });

  it('is kept alive by a timer until stopped, and then runs out', async () => {
    const s = await store();
    vi.useFakeTimers({
      now: new Date('2026-01-01T00:00:00Z'),
      toFake: ['setInterval', 'clearInterval', 'Date'],
    });
    try {
      const clock = { now: () => new Date() };
      const heartbeat = async () => (await readClaim(s, KEY))?.heartbeatAt;
      await claimName({ store: s, key: KEY, runId: 'run-1', startedAt: clock.now(), leaseSeconds: 30 });
      const keeper = keepClaimAlive({ store: s, key: KEY, runId: 'run-1', clock, leaseSeconds: 30 });
      // Renewed every third of its lease: past the lease it started with, still live.
      for (const second of ['10', '20', '30', '40']) {
        await vi.advanceTimersByTimeAsync(10_000);
        // (waitFor moves the fake clock on by its polling interval, a few milliseconds)
        await vi.waitFor(async () => expect(await heartbeat()).toMatch(`2026-01-01T00:00:${second}.`));
      }
      await keeper.stop();
      await vi.advanceTimersByTimeAsync(60_000);
      const last = await readClaim(s, KEY);
      expect(last?.heartbeatAt).toMatch('2026-01-01T00:00:40.');
      expect(last && claimStanding(last, clock.now()).live).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });
});
