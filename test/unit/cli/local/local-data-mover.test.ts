import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { localRepository } from '../../../../cli/local/local-data-mover.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';

describe('the local repository', () => {
  it('keeps its key file apart from the backup directory it protects', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lifeboat-local-repo-'));
    const store = new LocalDirectoryStore(join(dir, 'backups'));
    for (const keyFile of [join(dir, 'backups', 'repository.key'), join(dir, 'backups', 'plugins', 'k')])
      expect(() => localRepository(store, keyFile)).toThrow(
        `--repository-key-file ${keyFile} is inside the backup directory`,
      );
    for (const keyFile of [join(dir, 'repository.key'), join(dir, 'backups-key'), join(dir, '..key')])
      expect(localRepository(store, keyFile)).toEqual({ directory: join(dir, 'backups'), keyFile });
  });
});
