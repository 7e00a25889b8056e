import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { publishOutcome } from '../../../../functions/publish-outcome/publish-outcome.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import { LocalEventFile } from '../../../../shared/adapters/local-event-file.js';
import { backupDocument, CLUSTER_ANNOTATION } from '../../../../shared/domain/storage/backup-document.js';
import { backupKeys } from '../../../../shared/domain/storage/keys.js';
import type { EventBus, LifeboatEvent } from '../../../../shared/ports/event-bus.js';

const NOW = new Date('2026-03-01T10:05:00Z');
const clock = { now: () => NOW };

async function fixture(): Promise<{ store: LocalDirectoryStore; bus: EventBus; events: LifeboatEvent[] }> {
  const store = new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'publish-outcome-')));
  const events: LifeboatEvent[] = [];
  return { store, bus: { publish: async (event) => void events.push(event) }, events };
}

const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

const backupInput = (name: string) =>
  JSON.stringify({ request: { cluster: 'prod', backup: { metadata: { name } } } });

async function storeBackup(store: LocalDirectoryStore, name: string, phase: 'Completed' | 'PartiallyFailed') {
  const document = backupDocument({
    name,
    annotations: { [CLUSTER_ANNOTATION]: 'prod' },
    spec: {},
    startedAt: new Date('2026-03-01T10:00:00Z'),
    completedAt: new Date('2026-03-01T10:01:40Z'),
    expiration: new Date('2026-03-31T10:00:00Z'),
    phase,
    totalItems: 12,
    itemsBackedUp: 12,
    errors: phase === 'Completed' ? 0 : 2,
    warnings: 1,
  });
  await store.put(backupKeys(name).metadata, json(document));
  await store.put(backupKeys(name).contents, new Uint8Array(4096));
}

describe('the event of an execution that ended', () => {
  it('says a recorded backup ended with its Velero status, and gives its figures', async () => {
    const { store, bus, events } = await fixture();
    await storeBackup(store, 'nightly', 'PartiallyFailed');
    const { figures } = await publishOutcome(
      {
        workflow: 'backup',
        executionName: 'backup-nightly-1',
        status: 'SUCCEEDED',
        input: backupInput('nightly'),
      },
      { store, bus, clock },
    );
    expect(events).toHaveLength(1);
    expect(events[0]?.detailType).toBe('Backup PartiallyFailed');
    expect(events[0]?.detail).toMatchObject({
      backup: 'nightly',
      cluster: 'prod',
      phase: 'PartiallyFailed',
      execution: 'backup-nightly-1',
      status: { phase: 'PartiallyFailed', errors: 2, warnings: 1 },
    });
    expect(figures).toEqual({
      workflow: 'backup',
      phase: 'PartiallyFailed',
      items: 12,
      errors: 2,
      warnings: 1,
      bytes: 4096,
      seconds: 100,
    });
  });

  it('says FailedValidation with the problems, never the document another backup of that name holds', async () => {
    const { store, bus, events } = await fixture();
    await storeBackup(store, 'taken', 'Completed');
    await publishOutcome(
      {
        workflow: 'backup',
        executionName: 'backup-taken-2',
        status: 'FAILED',
        error: 'FailedValidation',
        cause: 'backup.metadata.name: a backup named "taken" already exists',
        input: backupInput('taken'),
      },
      { store, bus, clock },
    );
    expect(events[0]?.detailType).toBe('Backup FailedValidation');
    expect(events[0]?.detail).toMatchObject({
      phase: 'FailedValidation',
      status: { failureReason: 'backup.metadata.name: a backup named "taken" already exists' },
    });
  });

  it('says a backup whose velero-backup.json cannot be read Failed, with the execution’s error', async () => {
    const { store, bus, events } = await fixture();
    await store.put(backupKeys('broken').metadata, json({ kind: 'NotABackup' }));
    await publishOutcome(
      {
        workflow: 'backup',
        executionName: 'backup-broken-1',
        status: 'FAILED',
        error: 'BackupFailed',
        cause: 'the item-block queue was deleted',
        input: backupInput('broken'),
      },
      { store, bus, clock },
    );
    expect(events[0]?.detailType).toBe('Backup Failed');
    expect(events[0]?.detail).toMatchObject({
      status: { failureReason: 'BackupFailed: the item-block queue was deleted' },
    });
  });

  it('says a restore that ended before it was recorded Failed, naming the restore and its cluster', async () => {
    const { store, bus, events } = await fixture();
    await publishOutcome(
      {
        workflow: 'restore',
        executionName: 'restore-r1-1',
        status: 'TIMED_OUT',
        input: JSON.stringify({ request: { cluster: 'dr', restore: { metadata: { name: 'r1' } } } }),
      },
      { store, bus, clock },
    );
    expect(events[0]?.detailType).toBe('Restore Failed');
    expect(events[0]?.detail).toMatchObject({
      restore: 'r1',
      cluster: 'dr',
      status: { failureReason: 'TIMED_OUT' },
    });
  });

  it('says a deletion Completed once its request records the backup deleted', async () => {
    const { store, bus, events } = await fixture();
    await store.put(
      backupKeys('old').deleteRequest,
      json({
        apiVersion: 'velero.io/v1',
        kind: 'DeleteBackupRequest',
        metadata: {
          name: 'old-1',
          namespace: 'velero',
          generation: 1,
          creationTimestamp: '2026-03-01T10:00:00Z',
        },
        spec: { backupName: 'old' },
        status: { phase: 'Processed', deleted: true, objectsDeleted: 9, errors: [] },
      }),
    );
    const { figures } = await publishOutcome(
      {
        workflow: 'delete',
        executionName: 'delete-old-1',
        status: 'SUCCEEDED',
        input: JSON.stringify({ name: 'old' }),
      },
      { store, bus, clock },
    );
    expect(events[0]?.detailType).toBe('Deletion Completed');
    expect(figures).toMatchObject({ phase: 'Completed', items: 9, errors: 0 });
  });
});

describe('the local events file', () => {
  it('keeps every event as EventBridge delivers it, oldest first', async () => {
    const file = new LocalEventFile(await mkdtemp(join(tmpdir(), 'events-')));
    expect(await file.read()).toEqual([]);
    await file.publish({ detailType: 'Backup Completed', detail: { backup: 'a' }, time: NOW });
    await file.publish({ detailType: 'Deletion Failed', detail: { backup: 'a' }, time: NOW });
    expect(await file.read()).toEqual([
      {
        source: 'lifeboat',
        'detail-type': 'Backup Completed',
        time: NOW.toISOString(),
        detail: { backup: 'a' },
      },
      {
        source: 'lifeboat',
        'detail-type': 'Deletion Failed',
        time: NOW.toISOString(),
        detail: { backup: 'a' },
      },
    ]);
  });
});
