import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { deleteBackup } from '../../../../functions/delete-backup/delete-backup.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import { BackupInProgress, CloudRequestRefused } from '../../../../shared/domain/errors.js';
import { backupKeys, repositoryKeys } from '../../../../shared/domain/storage/keys.js';
import type { ObjectStore } from '../../../../shared/ports/object-store.js';
import type { SnapshotProgress, Snapshotter } from '../../../../shared/ports/snapshotter.js';

/** EC2 as far as deletion uses it: snapshots by tag, deletes (refusing those named in `refuse`). */
class FakeSnapshots implements Pick<Snapshotter, 'findSnapshots' | 'deleteSnapshot'> {
  readonly deleted: string[] = [];
  constructor(
    private readonly tagged: Record<string, string[]>,
    private readonly refuse: ReadonlySet<string> = new Set(),
  ) {}
  async findSnapshots(options: {
    tags: readonly { key: string; value: string }[];
  }): Promise<SnapshotProgress[]> {
    const backup = options.tags.find((t) => t.key === 'velero.io/backup')?.value ?? '';
    return (this.tagged[backup] ?? []).map((snapshotId) => ({
      snapshotId,
      state: 'completed',
      encrypted: false,
      tags: [],
    }));
  }
  async deleteSnapshot(snapshotId: string): Promise<void> {
    if (this.refuse.has(snapshotId))
      throw new CloudRequestRefused(`not authorized to delete ${snapshotId}`, {
        code: 'UnauthorizedOperation',
      });
    this.deleted.push(snapshotId);
  }
}
const asSnapshotter = (fake: FakeSnapshots): Snapshotter => fake as unknown as Snapshotter;

async function storeWithBackups(): Promise<LocalDirectoryStore> {
  const store = new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'delete-backup-')));
  const json = (v: unknown) => gzipSync(JSON.stringify(v));
  for (const name of ['mon', 'tue']) {
    const keys = backupKeys(name);
    await store.put(keys.metadata, JSON.stringify({ metadata: { name } }));
    await store.put(keys.contents, 'tar');
    await store.put(keys.claim, liveClaim());
    await store.put(
      keys.volumeInfo,
      json([
        {
          pvcName: 'data',
          backupMethod: 'NativeSnapshot',
          snapshotDataMoved: true,
          nativeSnapshotInfo: { snapshotHandle: `snap-${name === 'mon' ? '01' : '02'}` },
          snapshotDataMovementInfo: {
            dataMover: 'lifeboat',
            retainedSnapshot: `snap-${name === 'mon' ? '01' : '02'}`,
            snapshotHandle: `${name}_vol-1_20260101T00000${name === 'mon' ? '0' : '1'}Z`,
          },
        },
        {
          pvcName: 'velero-moved',
          snapshotDataMoved: true,
          snapshotDataMovementInfo: { dataMover: 'velero', snapshotHandle: 'kopia-1' },
        },
      ]),
    );
    await store.put(keys.volumeSnapshots, json([]));
  }
  for (const id of ['mon_vol-1_20260101T000000Z', 'tue_vol-1_20260101T000001Z', 'mon_vol-2_20251231T000000Z'])
    await store.put(repositoryKeys.snapshot(id), '{}');
  await store.put(repositoryKeys.format, '{}');
  return store;
}

/** The claim of a run that renewed it just now: a backup in progress. */
const liveClaim = (): string => {
  const now = new Date().toISOString();
  return JSON.stringify({ runId: 'run-1', startedAt: now, heartbeatAt: now, leaseSeconds: 3600 });
};

describe('deleting a backup', () => {
  it('deletes its snapshots (named, or tagged by a failed run), its manifests, its objects and its claim, then collects garbage', async () => {
    const store = await storeWithBackups();
    const snapshots = new FakeSnapshots({ mon: ['snap-01', 'snap-09'] });
    let collected = 0;
    const gcReport = {
      liveManifests: 1,
      packsKept: 3,
      packsDeleted: 2,
      bytesFreed: 1234,
      packsRepacked: 1,
      blobsCopied: 4,
      bytesCopied: 567,
      problems: [],
    };
    const result = await deleteBackup(
      { name: 'mon' },
      {
        store,
        snapshotter: asSnapshotter(snapshots),
        collectGarbage: async () => {
          collected++;
          return gcReport;
        },
      },
    );
    expect(result).toEqual({
      name: 'mon',
      found: true,
      deleted: true,
      snapshotsDeleted: ['snap-01', 'snap-09'],
      manifestsDeleted: ['mon_vol-1_20260101T000000Z', 'mon_vol-2_20251231T000000Z'],
      objectsDeleted: 4,
      errors: [],
      gc: gcReport,
    });
    expect(collected).toBe(1);
    expect(await store.list(backupKeys('mon').dir)).toEqual([]);
    expect(await store.exists(backupKeys('mon').claim)).toBe(false);
    // The other backup is untouched.
    expect(await store.exists(repositoryKeys.snapshot('tue_vol-1_20260101T000001Z'))).toBe(true);
    expect(await store.list(backupKeys('tue').dir)).toHaveLength(4);
    expect(snapshots.deleted).not.toContain('snap-02');
  });

  it('keeps the backup when a snapshot cannot be deleted, so a later run can finish', async () => {
    const store = await storeWithBackups();
    const result = await deleteBackup(
      { name: 'mon' },
      { store, snapshotter: asSnapshotter(new FakeSnapshots({}, new Set(['snap-01']))) },
    );
    expect(result).toMatchObject({
      found: true,
      deleted: false,
      objectsDeleted: 0,
      errors: ['snapshot snap-01 could not be deleted: not authorized to delete snap-01'],
    });
    expect(await store.exists(backupKeys('mon').metadata)).toBe(true);
    const again = await deleteBackup(
      { name: 'mon' },
      { store, snapshotter: asSnapshotter(new FakeSnapshots({})) },
    );
    expect(again).toMatchObject({ deleted: true, snapshotsDeleted: ['snap-01'], manifestsDeleted: [] });
  });

  it('keeps the snapshots and the backup without EC2 access, saying so; finds nothing of an unknown backup', async () => {
    const store = await storeWithBackups();
    expect(await deleteBackup({ name: 'mon' }, { store })).toMatchObject({
      deleted: false,
      errors: ['snapshot snap-01 is kept: no EC2 access to delete it'],
    });
    expect(await deleteBackup({ name: 'wed' }, { store })).toEqual({
      name: 'wed',
      found: false,
      deleted: false,
      snapshotsDeleted: [],
      manifestsDeleted: [],
      objectsDeleted: 0,
      errors: [],
    });
  });

  it('refuses a backup still in progress (no velero-backup.json under its claim, or a running phase) and deletes nothing', async () => {
    for (const metadata of [
      undefined,
      ...[
        'New',
        'InProgress',
        'Finalizing',
        'FinalizingPartiallyFailed',
        'WaitingForPluginOperations',
        'WaitingForPluginOperationsPartiallyFailed',
      ].map((phase) => JSON.stringify({ metadata: { name: 'mon' }, status: { phase } })),
    ]) {
      const store = await storeWithBackups();
      if (metadata === undefined) await store.delete(backupKeys('mon').metadata);
      else await store.put(backupKeys('mon').metadata, metadata);
      const before = await store.list('');
      const snapshots = new FakeSnapshots({ mon: ['snap-01'] });
      const deleting = deleteBackup({ name: 'mon' }, { store, snapshotter: asSnapshotter(snapshots) });
      await expect(deleting).rejects.toBeInstanceOf(BackupInProgress);
      await expect(deleting).rejects.toThrow('backup mon is still in progress');
      expect(await store.list('')).toEqual(before);
      expect(snapshots.deleted).toEqual([]);
    }
  });

  it('finishes a deletion stopped after velero-backup.json went, and frees the name', async () => {
    const store = await storeWithBackups();
    const keys = backupKeys('mon');
    const snapshots = new FakeSnapshots({ mon: ['snap-01'] });
    // The first run stopped right after velero-backup.json: its marker is there, the claim too.
    await store.put(keys.deletion, '{}');
    await store.delete(keys.metadata);
    const result = await deleteBackup({ name: 'mon' }, { store, snapshotter: asSnapshotter(snapshots) });
    expect(result).toMatchObject({ found: true, deleted: true, objectsDeleted: 3 });
    expect(await store.exists(keys.claim)).toBe(false);
    expect(await store.exists(keys.deletion)).toBe(false);
    expect(await store.list(keys.dir)).toEqual([]);
  });

  it('deletes a finished backup whatever its final phase', async () => {
    const store = await storeWithBackups();
    await store.put(
      backupKeys('mon').metadata,
      JSON.stringify({ metadata: { name: 'mon' }, status: { phase: 'PartiallyFailed' } }),
    );
    const result = await deleteBackup(
      { name: 'mon' },
      { store, snapshotter: asSnapshotter(new FakeSnapshots({})) },
    );
    expect(result).toMatchObject({ deleted: true, objectsDeleted: 4 });
  });

  it('deletes a backup whose volume files inflate to gigabytes, reading them no further than their limit', async () => {
    // Prepare: volume files of 3 MB that inflate to 3 GB of JSON whitespace.
    const store = await storeWithBackups();
    const member = gzipSync(Buffer.alloc(1024 * 1024, 0x20), { level: 9 });
    const bomb = Buffer.concat([
      gzipSync('['),
      ...Array.from({ length: 3 * 1024 }, () => member),
      gzipSync(']'),
    ]);
    await store.put(backupKeys('mon').volumeInfo, bomb);
    await store.put(backupKeys('mon').volumeSnapshots, bomb);
    const snapshots = new FakeSnapshots({ mon: ['snap-09'] });
    const reading = new ReadCountingStore(store);

    // Act
    const result = await deleteBackup(
      { name: 'mon' },
      { store: reading, snapshotter: asSnapshotter(snapshots) },
    );

    // Assess: what the files would name is unknown; what the backup's tags name goes, and so does
    // the backup. Of each 3 MB file, no more was read than its 32 MiB limit inflates from.
    expect(result).toMatchObject({ found: true, deleted: true, snapshotsDeleted: ['snap-09'] });
    expect(await store.list(backupKeys('mon').dir)).toEqual([]);
    expect(reading.bytesRead(backupKeys('mon').volumeInfo)).toBeLessThan(512 * 1024);
    expect(reading.bytesRead(backupKeys('mon').volumeSnapshots)).toBeLessThan(512 * 1024);
  });
});

/** The store, counting the bytes read of each key (whole or streamed). */
class ReadCountingStore implements ObjectStore {
  private readonly read = new Map<string, number>();
  readonly location: string;
  constructor(private readonly inner: ObjectStore) {
    this.location = inner.location;
  }
  bytesRead(key: string): number {
    return this.read.get(key) ?? 0;
  }
  private count(key: string, n: number): void {
    this.read.set(key, this.bytesRead(key) + n);
  }
  put: ObjectStore['put'] = (key, body, options) => this.inner.put(key, body, options);
  putStream: ObjectStore['putStream'] = (key, body, options) => this.inner.putStream(key, body, options);
  exists: ObjectStore['exists'] = (key, options) => this.inner.exists(key, options);
  list: ObjectStore['list'] = (prefix, options) => this.inner.list(prefix, options);
  delete: ObjectStore['delete'] = (key, options) => this.inner.delete(key, options);
  get: ObjectStore['get'] = async (key, options) => {
    const body = await this.inner.get(key, options);
    this.count(key, body?.byteLength ?? 0);
    return body;
  };
  getStream: ObjectStore['getStream'] = async (key, options) => {
    const body = await this.inner.getStream(key, options);
    if (!body) return undefined;
    const count = (n: number) => this.count(key, n);
    return (async function* () {
      for await (const chunk of body) {
        count(chunk.byteLength);
        yield chunk;
      }
    })();
  };
}
