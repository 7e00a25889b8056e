import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readDrillReport } from '../../../../functions/common/drill-records.js';
import { startDrill } from '../../../../functions/start-drill/start-drill.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import { type BackupPhase, backupDocument } from '../../../../shared/domain/storage/backup-document.js';
import { backupKeys } from '../../../../shared/domain/storage/keys.js';

const NOW = new Date('2026-11-27T12:00:00Z');
const clock = { now: () => NOW };

async function storeWith(
  backups: readonly { name: string; startedAt: string; phase: BackupPhase; schedule?: string }[],
): Promise<LocalDirectoryStore> {
  const store = new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'lifeboat-drill-')));
  for (const b of backups) {
    const doc = backupDocument({
      name: b.name,
      ...(b.schedule ? { labels: { 'velero.io/schedule-name': b.schedule } } : {}),
      spec: {},
      startedAt: new Date(b.startedAt),
      expiration: new Date('2026-12-27T00:00:00Z'),
      phase: b.phase,
    });
    await store.put(backupKeys(b.name).metadata, JSON.stringify(doc));
  }
  return store;
}

const request = (spec: Record<string, unknown>, name = 'weekly') => ({
  cluster: 'dr',
  drill: { metadata: { name }, spec },
});

describe('starting a drill', () => {
  it.each([
    [{ backupName: 'a', scheduleName: 's' }, 'drill.spec.backupName'],
    [{}, 'drill.spec.backupName'],
    [{ backupName: 'a', readyTimeout: 'soon' }, 'drill.spec.readyTimeout'],
    [{ backupName: 'a', readyTimeout: '48h' }, 'drill.spec.readyTimeout'],
    [{ backupName: 'a', namespaceMapping: { a: 'x', b: 'x' } }, 'drill.spec.namespaceMapping'],
    [{ backupName: 'Not_A_Name' }, 'drill.spec.backupName'],
    [{ backupName: 'missing' }, 'drill.spec.backupName'],
    [{ backupName: 'failed' }, 'drill.spec.backupName'],
    [{ scheduleName: 'none' }, 'drill.spec.scheduleName'],
  ])('refuses %j by its field', async (spec, path) => {
    const store = await storeWith([{ name: 'failed', startedAt: '2026-11-27T00:00:00Z', phase: 'Failed' }]);
    const outcome = await startDrill({ request: request(spec), runId: 'r1' }, { store, clock });
    expect(outcome).toMatchObject({ valid: false, problems: [expect.objectContaining({ path })] });
    expect(await readDrillReport(store, 'weekly')).toBeUndefined();
  });

  it("takes a schedule's latest Completed backup by its label, and records the drill InProgress", async () => {
    const store = await storeWith([
      { name: 'nightly-1', startedAt: '2026-11-26T00:00:00Z', phase: 'Completed', schedule: 'nightly' },
      { name: 'nightly-2', startedAt: '2026-11-27T00:00:00Z', phase: 'Completed', schedule: 'nightly' },
      { name: 'nightly-3', startedAt: '2026-11-27T06:00:00Z', phase: 'Failed', schedule: 'nightly' },
      { name: 'other', startedAt: '2026-11-27T11:00:00Z', phase: 'Completed', schedule: 'hourly' },
    ]);
    const outcome = await startDrill(
      { request: request({ scheduleName: 'nightly', namespaceMapping: { shop: 'shop-dr' } }), runId: 'r1' },
      { store, clock, pollSeconds: 5 },
    );
    expect(outcome).toMatchObject({
      valid: true,
      run: {
        name: 'weekly',
        backupName: 'nightly-2',
        scheduleName: 'nightly',
        startedAt: NOW.toISOString(),
        readyDeadline: '2026-11-27T12:10:00.000Z',
        pollSeconds: 5,
      },
      restore: {
        cluster: 'dr',
        restore: {
          metadata: { name: 'weekly' },
          spec: { backupName: 'nightly-2', namespaceMapping: { shop: 'shop-dr' } },
        },
      },
    });
    expect(await readDrillReport(store, 'weekly')).toMatchObject({
      phase: 'InProgress',
      rpoSeconds: 12 * 3600,
    });
  });

  it('starts the same drill again for the same run, and refuses the name to another', async () => {
    const store = await storeWith([{ name: 'b', startedAt: '2026-11-27T00:00:00Z', phase: 'Completed' }]);
    const first = await startDrill({ request: request({ backupName: 'b' }), runId: 'r1' }, { store, clock });
    const later = { now: () => new Date('2026-11-27T12:05:00Z') };
    const again = await startDrill(
      { request: request({ backupName: 'b' }), runId: 'r1' },
      { store, clock: later },
    );
    expect(again).toEqual(first);
    const other = await startDrill({ request: request({ backupName: 'b' }), runId: 'r2' }, { store, clock });
    expect(other).toMatchObject({ valid: false, problems: [{ path: 'drill.metadata.name' }] });
  });
});
