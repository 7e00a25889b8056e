import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateRestore } from '../../../../functions/validate-restore/validate-restore.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import { backupKeys, restoreKeys } from '../../../../shared/domain/storage/keys.js';

const clock = { now: () => new Date('2026-11-24T10:00:00Z') };

/** A Completed backup `nightly` in a fresh directory store. */
async function storeWithBackup(): Promise<LocalDirectoryStore> {
  const store = new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'restore-name-')));
  await store.put(
    backupKeys('nightly').metadata,
    JSON.stringify({
      apiVersion: 'velero.io/v1',
      kind: 'Backup',
      metadata: { name: 'nightly' },
      spec: {},
      status: { phase: 'Completed', startTimestamp: '2026-11-23T10:00:00Z' },
    }),
  );
  return store;
}

const request = (name: string, dryRun: boolean) => ({
  cluster: 'local',
  restore: { metadata: { name }, spec: { backupName: 'nightly', ...(dryRun ? { dryRun: true } : {}) } },
});

describe('ValidateRestore and the restore name', () => {
  it('refuses a dry run the name a real run would be refused', async () => {
    // Prepare
    const store = await storeWithBackup();
    const first = await validateRestore({ request: request('r1', false), runId: 'run-1' }, { store, clock });
    expect(first.valid).toBe(true);
    // Act
    const dry = await validateRestore({ request: request('r1', true), runId: 'run-2' }, { store, clock });
    // Assess
    expect(dry).toMatchObject({
      valid: false,
      // The first run's claim is live: the name is taken by a restore in progress.
      problems: [
        {
          path: 'restore.metadata.name',
          message: 'a restore named "r1" already exists and is in progress (run run-1)',
        },
      ],
    });
  });

  it('lets a dry run with a free name through without claiming it', async () => {
    const store = await storeWithBackup();
    const dry = await validateRestore({ request: request('r2', true), runId: 'run-3' }, { store, clock });
    expect(dry.valid).toBe(true);
    expect(await store.exists(restoreKeys('r2').claim)).toBe(false);
    const real = await validateRestore({ request: request('r2', false), runId: 'run-4' }, { store, clock });
    expect(real.valid).toBe(true);
  });
});
