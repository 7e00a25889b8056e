import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateRestore } from '../../../../functions/validate-restore/validate-restore.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import { backupKeys } from '../../../../shared/domain/storage/keys.js';

const clock = { now: () => new Date('2026-11-28T10:00:00Z') };

/** Backups of schedules `nightly` and `hourly`, and one made by hand, in a fresh directory store. */
async function storeWithBackups(): Promise<LocalDirectoryStore> {
  const store = new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'from-schedule-')));
  const backups = [
    ['nightly-20261126030000', 'nightly', 'Completed', '2026-11-26T03:00:00Z'],
    ['nightly-20261127030000', 'nightly', 'Completed', '2026-11-27T03:00:00Z'],
    ['nightly-20261128030000', 'nightly', 'PartiallyFailed', '2026-11-28T03:00:00Z'],
    ['hourly-20261128090000', 'hourly', 'Completed', '2026-11-28T09:00:00Z'],
    ['by-hand', undefined, 'Completed', '2026-11-28T09:30:00Z'],
  ] as const;
  for (const [name, schedule, phase, startTimestamp] of backups)
    await store.put(
      backupKeys(name).metadata,
      JSON.stringify({
        apiVersion: 'velero.io/v1',
        kind: 'Backup',
        metadata: { name, ...(schedule ? { labels: { 'velero.io/schedule-name': schedule } } : {}) },
        spec: {},
        status: { phase, startTimestamp },
      }),
    );
  return store;
}

const request = (name: string, scheduleName: string) => ({
  cluster: 'local',
  restore: { metadata: { name }, spec: { scheduleName } },
});

describe('ValidateRestore from a schedule', () => {
  it("takes the schedule's latest Completed backup, as Velero does", async () => {
    const store = await storeWithBackups();
    const checked = await validateRestore(
      { request: request('r1', 'nightly'), runId: 'run-1' },
      { store, clock },
    );
    expect(checked).toMatchObject({ valid: true, run: { backupName: 'nightly-20261127030000' } });
  });

  it('refuses a schedule with no Completed backup, naming the field', async () => {
    const store = await storeWithBackups();
    const checked = await validateRestore(
      { request: request('r2', 'weekly'), runId: 'run-2' },
      { store, clock },
    );
    expect(checked).toMatchObject({
      valid: false,
      problems: [{ path: 'restore.spec.scheduleName', message: 'schedule "weekly" has no Completed backup' }],
    });
  });
});
