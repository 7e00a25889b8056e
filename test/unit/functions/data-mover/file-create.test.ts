import { lstat, mkdir, mkdtemp, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Creator, createAt, fileCreation } from '../../../../functions/data-mover/file-create.js';
import type { FileEntry } from '../../../../shared/domain/files/tree.js';

const root: Creator = { ownership: true, uid: 0, gid: 0, umask: 0o022 };
const file = (over: Partial<FileEntry>): FileEntry => ({
  name: 'f',
  type: 'file',
  mode: 0o644,
  uid: 0,
  gid: 0,
  mtimeNs: '1',
  size: 10,
  content: [[0, 10, 'a'.repeat(64)]],
  ...over,
});

describe('how a restored file is created', () => {
  it.each([
    [
      'owned already, mode within the umask',
      file({}),
      root,
      true,
      { mode: 0o644, truncate: false, chown: false, chmod: false },
    ],
    [
      'a mode the umask would narrow',
      file({ mode: 0o666 }),
      root,
      true,
      { mode: 0o600, truncate: false, chown: false, chmod: true },
    ],
    [
      'setuid',
      file({ mode: 0o4755 }),
      root,
      true,
      { mode: 0o600, truncate: false, chown: false, chmod: true },
    ],
    [
      'another owner',
      file({ uid: 1000 }),
      root,
      true,
      { mode: 0o600, truncate: false, chown: true, chmod: true },
    ],
    [
      'another group',
      file({ gid: 1000 }),
      root,
      true,
      { mode: 0o600, truncate: false, chown: true, chmod: true },
    ],
    [
      'a directory of another group',
      file({}),
      root,
      false,
      { mode: 0o600, truncate: false, chown: true, chmod: true },
    ],
    [
      'holes',
      file({ content: [[4, 6, 'a'.repeat(64)]] }),
      root,
      true,
      { mode: 0o644, truncate: true, chown: false, chmod: false },
    ],
    [
      'content lists',
      file({ content: undefined, contentLists: ['b'.repeat(64)] }),
      root,
      true,
      { mode: 0o644, truncate: true, chown: false, chmod: false },
    ],
    [
      'empty',
      file({ size: 0, content: [] }),
      root,
      true,
      { mode: 0o644, truncate: false, chown: false, chmod: false },
    ],
    [
      'not root: never chowned',
      file({ uid: 1000 }),
      { ...root, ownership: false, uid: 1000, gid: 1000 },
      false,
      { mode: 0o644, truncate: false, chown: false, chmod: false },
    ],
    [
      'an unknown umask',
      file({}),
      { ...root, umask: 0o777 },
      true,
      { mode: 0o600, truncate: false, chown: false, chmod: true },
    ],
  ])('%s', (_, entry, creator, ownGroup, expected) => {
    expect(fileCreation({ entry, creator, ownGroup })).toEqual(expected);
  });
});

describe('creating an entry where a previous run left one', () => {
  const temporaries: string[] = [];
  afterAll(async () => {
    await Promise.all(temporaries.map((dir) => rm(dir, { recursive: true, force: true })));
  });
  const temp = async (): Promise<string> => {
    const dir = await mkdtemp(join(tmpdir(), 'file-create-'));
    temporaries.push(dir);
    return dir;
  };

  it('creates at once on a free name, and replaces a file or a symlink without following it', async () => {
    // Prepare: a symlink to a directory outside, and a file, where entries go.
    const dir = await temp();
    const outside = await temp();
    await symlink(outside, join(dir, 'link'));
    await writeFile(join(dir, 'file'), 'old');

    // Act
    const made = await Promise.all(
      ['free', 'link', 'file'].map((name) => {
        const path = Buffer.from(join(dir, name));
        return createAt(path, { keepDirectory: true, make: () => mkdir(path) });
      }),
    );

    // Assess
    expect(made).toEqual([true, true, true]);
    for (const name of ['free', 'link', 'file'])
      expect((await lstat(join(dir, name))).isDirectory()).toBe(true);
    expect(await readlink(join(dir, 'link')).catch(() => 'not a link')).toBe('not a link');
  });

  it('keeps a directory that is there for a directory, and replaces one for a file', async () => {
    const dir = await temp();
    await mkdir(join(dir, 'kept/inner'), { recursive: true });
    await mkdir(join(dir, 'replaced/inner'), { recursive: true });
    const kept = Buffer.from(join(dir, 'kept'));
    const replaced = Buffer.from(join(dir, 'replaced'));

    const keptMade = await createAt(kept, { keepDirectory: true, make: () => mkdir(kept) });
    const fileMade = await createAt(replaced, {
      keepDirectory: false,
      make: () => writeFile(replaced, 'new', { flag: 'wx' }),
    });

    expect(keptMade).toBe(false);
    expect((await lstat(join(dir, 'kept/inner'))).isDirectory()).toBe(true);
    expect(fileMade).toBe(true);
    expect(await readFile(replaced, 'utf8')).toBe('new');
  });

  it('passes on a failure other than a taken name', async () => {
    const dir = await temp();
    const path = Buffer.from(join(dir, 'missing/child'));
    await expect(createAt(path, { keepDirectory: false, make: () => mkdir(path) })).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });
});
