import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deleteBackup } from '../../../../functions/delete-backup/delete-backup.js';
import {
  settleAbandonedBackup,
  settleClaimedBackups,
} from '../../../../functions/record-backup-failure/abandoned-backup.js';
import { validateBackup } from '../../../../functions/validate-backup/validate-backup.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import { backupKeys } from '../../../../shared/domain/storage/keys.js';

const START = new Date('2026-03-01T10:00:00Z');
const at = (secondsAfterStart: number) => ({
  now: () => new Date(START.getTime() + secondsAfterStart * 1000),
});
const request = (name: string, spec: Record<string, unknown> = {}) => ({
  cluster: 'c',
  backup: { apiVersion: 'velero.io/v1', kind: 'Backup', metadata: { name }, spec },
});

async function storeWithClaimedRun(): Promise<LocalDirectoryStore> {
  const store = new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'abandoned-')));
  const outcome = await validateBackup(
    { request: request('nightly', { ttl: '24h' }), runId: 'local-dead' },
    { store, clock: at(0), itemBlocksTimeoutSeconds: 60, claimLeaseSeconds: 30 },
  );
  expect(outcome.valid).toBe(true);
  return store;
}

const documentOf = async (store: LocalDirectoryStore, name: string) =>
  JSON.parse(Buffer.from((await store.get(backupKeys(name).metadata)) ?? []).toString()) as {
    spec: Record<string, unknown>;
    status: { phase: string; failureReason?: string; startTimestamp: string; expiration: string };
  };

describe('a backup whose run died', () => {
  it('is in progress while its claim is renewed within the lease, and writes nothing then', async () => {
    const store = await storeWithClaimedRun();
    expect(await settleAbandonedBackup({ name: 'nightly' }, { store, clock: at(30) })).toMatchObject({
      state: 'running',
      claim: { runId: 'local-dead' },
    });
    expect(await store.exists(backupKeys('nightly').metadata)).toBe(false);
    expect((await settleClaimedBackups({ store, clock: at(30) })).map((d) => d.status.phase)).toEqual([
      'InProgress',
    ]);
  });

  it('is recorded Failed with the reason once the lease ran out, with its spec, start and expiration', async () => {
    const store = await storeWithClaimedRun();
    const settled = await settleAbandonedBackup({ name: 'nightly' }, { store, clock: at(31) });
    expect(settled).toEqual({
      state: 'stored',
      abandoned: expect.stringContaining('run local-dead stopped renewing'),
    });
    const document = await documentOf(store, 'nightly');
    expect(document.status).toMatchObject({
      phase: 'Failed',
      startTimestamp: '2026-03-01T10:00:00Z',
      expiration: '2026-03-02T10:00:00Z',
      failureReason: expect.stringMatching(/^RunAbandoned: run local-dead stopped renewing .*lease 30 s/),
    });
    expect(document.spec).toMatchObject({ ttl: '24h0m0s' });
    expect(await store.exists(backupKeys('nightly').logs)).toBe(true);
    // Recorded once: a second look changes nothing.
    expect(await settleAbandonedBackup({ name: 'nightly' }, { store, clock: at(90) })).toEqual({
      state: 'stored',
    });
  });

  it('stores its spec with the defaults Velero’s server fills in, so velero describe shows them', async () => {
    const store = await storeWithClaimedRun();
    await settleAbandonedBackup({ name: 'nightly' }, { store, clock: at(31) });
    const document = (await documentOf(store, 'nightly')) as Awaited<ReturnType<typeof documentOf>> & {
      metadata: { annotations?: Record<string, string> };
    };
    expect(document.spec).toEqual({
      includedNamespaces: ['*'],
      excludedClusterScopedResources: ['volumesnapshotcontents.snapshot.storage.k8s.io'],
      excludedNamespaceScopedResources: ['volumesnapshots.snapshot.storage.k8s.io'],
      metadata: {},
      hooks: {},
      ttl: '24h0m0s',
      storageLocation: 'default',
      volumeGroupSnapshotLabelKey: 'velero.io/volume-group',
      csiSnapshotTimeout: '10m0s',
      itemOperationTimeout: '4h0m0s',
      defaultVolumesToFsBackup: false,
      snapshotMoveData: false,
    });
    expect(document.metadata.annotations).toMatchObject({ 'velero.io/resource-timeout': '10m0s' });
  });

  it('keeps its name from a new run, saying why, until it is deleted; then the name is free', async () => {
    const store = await storeWithClaimedRun();
    const again = () =>
      validateBackup(
        { request: request('nightly'), runId: 'local-new' },
        { store, clock: at(120), itemBlocksTimeoutSeconds: 60 },
      );
    const refused = await again();
    expect(refused).toMatchObject({ valid: false });
    if (refused.valid) return;
    expect(refused.summary).toMatch(
      /backup\.metadata\.name: a backup named "nightly" already exists: its run died/,
    );
    expect((await documentOf(store, 'nightly')).status.phase).toBe('Failed');
    expect(await again()).toMatchObject({ valid: false });

    const deleted = await deleteBackup({ name: 'nightly' }, { store, clock: at(150) });
    expect(deleted).toMatchObject({ found: true, deleted: true });
    expect(await again()).toMatchObject({ valid: true, run: { name: 'nightly', runId: 'local-new' } });
  });

  it('is deletable without first being looked at, and the half-written files of its process go too', async () => {
    const store = await storeWithClaimedRun();
    const dir = store.location.slice('file://'.length);
    // A file the killed process was writing: its PID is no running process.
    await store.put(backupKeys('nightly').contents, 'x');
    await store.delete(backupKeys('nightly').contents);
    await writeFile(join(dir, 'backups/nightly/nightly.tar.gz.tmp-999999999-abcdef-1'), 'half');
    const deleted = await deleteBackup({ name: 'nightly' }, { store, clock: at(3600) });
    expect(deleted).toMatchObject({ found: true, deleted: true });
    expect(await readdir(join(dir, 'backups/nightly'))).toEqual([]);
    expect(await store.exists(backupKeys('nightly').claim)).toBe(false);
  });
});

describe('a request that would crash after claiming its name', () => {
  it('is refused by field path before anything is claimed (a TTL past what a date holds)', async () => {
    const store = new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'ttl-')));
    const outcome = await validateBackup(
      { request: request('huge', { ttl: '9999999999999999999h' }), runId: 'r' },
      { store, clock: at(0), itemBlocksTimeoutSeconds: 60 },
    );
    expect(outcome).toMatchObject({ valid: false, summary: expect.stringContaining('backup.spec.ttl:') });
    expect(await store.list('')).toEqual([]);
  });
});
