import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeWorkData } from '../../../../functions/common/work-data.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import { backupWorkKeys, restoreWorkKeys } from '../../../../shared/domain/storage/keys.js';

async function storeWith(keys: readonly string[]): Promise<LocalDirectoryStore> {
  const store = new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'work-data-')));
  for (const key of keys) await store.put(key, 'x');
  return store;
}

describe('removing a run’s working data', () => {
  const run = { name: 'nightly', runId: 'run-1' };
  const other = { name: 'nightly', runId: 'run-2' };

  it('deletes every object of the run, and nothing of another run or outside the working data', async () => {
    const mine = backupWorkKeys(run);
    const theirs = backupWorkKeys(other);
    const kept = [theirs.collected, 'backups/nightly/velero-backup.json', restoreWorkKeys(run).request];
    const store = await storeWith([
      mine.request,
      mine.collected,
      mine.messageResult('m1'),
      mine.fragment('m1'),
      ...kept,
    ]);
    expect(await removeWorkData({ store, dir: mine.dir })).toBe(4);
    expect(await store.list(mine.dir)).toEqual([]);
    for (const key of kept) expect(await store.exists(key)).toBe(true);
  });

  it('refuses a prefix that is not one run’s working data', async () => {
    const store = await storeWith(['backups/nightly/velero-backup.json']);
    for (const dir of [
      'backups/',
      'plugins/lifeboat/work/',
      'plugins/lifeboat/work/backups/',
      'plugins/lifeboat/work/backups/nightly',
      'plugins/lifeboat/work/backups/nightly/',
    ])
      await expect(removeWorkData({ store, dir })).rejects.toThrow(/not one run's working prefix/);
    expect(await store.exists('backups/nightly/velero-backup.json')).toBe(true);
  });
});
