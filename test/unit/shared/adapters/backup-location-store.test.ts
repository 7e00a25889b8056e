import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BackupLocationStore, readOnlyLocation } from '../../../../shared/adapters/backup-location-store.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';

describe('a store with a read-only DR source location behind it', () => {
  let root: string;
  let own: LocalDirectoryStore;
  let sourceDir: LocalDirectoryStore;
  let store: BackupLocationStore;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'lifeboat-location-'));
    own = new LocalDirectoryStore(join(root, 'own'));
    sourceDir = new LocalDirectoryStore(join(root, 'source'));
    await sourceDir.put('backups/nightly/velero-backup.json', '{"source":true}');
    await sourceDir.put('backups/nightly/nightly.tar.gz', 'source archive');
    await sourceDir.put('backups/both/velero-backup.json', '{"source":true}');
    await own.put('backups/both/velero-backup.json', '{"own":true}');
    store = new BackupLocationStore(own, readOnlyLocation({ store: sourceDir, name: 'dr' }));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('reads a backup only the source holds from the source', async () => {
    expect(new TextDecoder().decode(await store.get('backups/nightly/nightly.tar.gz'))).toBe(
      'source archive',
    );
    expect(await store.exists('backups/nightly/velero-backup.json')).toBe(true);
    expect(await store.size('backups/nightly/nightly.tar.gz')).toBe('source archive'.length);
  });

  it('reads a backup the deployment holds itself from its own store (Velero: sync never replaces one)', async () => {
    expect(new TextDecoder().decode(await store.get('backups/both/velero-backup.json'))).toBe('{"own":true}');
  });

  it('writes restores and everything else to its own store, never to the source', async () => {
    await store.put('restores/r1/restore-r1-results.gz', 'results');
    await store.put('backups/nightly/extra.json', 'written');
    expect(await own.exists('restores/r1/restore-r1-results.gz')).toBe(true);
    expect(await sourceDir.exists('restores/r1/restore-r1-results.gz')).toBe(false);
    expect(await sourceDir.exists('backups/nightly/extra.json')).toBe(false);
    await store.delete('backups/nightly/nightly.tar.gz');
    expect(await sourceDir.exists('backups/nightly/nightly.tar.gz')).toBe(true);
  });

  it('lists its own backups only: the source is listed as its own location', async () => {
    expect(await store.list('backups/')).toEqual(['backups/both/velero-backup.json']);
    expect(await store.source.list('backups/')).toHaveLength(3);
  });

  it('refuses a write to the read-only location, naming it', async () => {
    await expect(store.source.put('backups/x/velero-backup.json', '{}')).rejects.toThrow(
      /backup location "dr" is read-only: not writing backups\/x\/velero-backup.json/,
    );
    await expect(store.source.delete('backups/nightly/nightly.tar.gz')).rejects.toThrow(/read-only/);
  });
});
