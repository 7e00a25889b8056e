/**
 * File mode end to end over the real pack repository on a local directory store: a tree with
 * every kind of entry is backed up, restored elsewhere and compared entry by entry (content
 * hashes, modes, ownership, symlink targets, mtimes, hard links, allocated blocks of sparse files).
 * Runs as root (chown to other users), as the data mover does.
 */

import { execFileSync } from 'node:child_process';
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import {
  chmod,
  chown,
  lchown,
  link,
  lstat,
  mkdir,
  mkdtemp,
  open,
  readdir,
  readFile,
  readlink,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  backupFileTree,
  chunkingOf,
  type FileBackupProgress,
  fileChunkingRecord,
} from '../../../../functions/data-mover/file-backup.js';
import { restoreFileTree } from '../../../../functions/data-mover/file-restore.js';
import { type FileTimes, nanosecondTimes } from '../../../../functions/data-mover/file-times.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import { LocalKeyWrapper } from '../../../../shared/adapters/local-key-wrapper.js';
import {
  type OpenedRepository,
  openRepository,
} from '../../../../shared/adapters/repository/open-repository.js';
import { HostileFileTree } from '../../../../shared/domain/errors.js';
import {
  type ChunkingParams,
  ContentChunker,
  FILE_CHUNKING,
} from '../../../../shared/domain/files/content-chunker.js';
import {
  encodeTreeBlob,
  type FileTreeEntry,
  fileTreeChildren,
} from '../../../../shared/domain/files/tree.js';
import type { Clock } from '../../../../shared/ports/clock.js';
import type { SnapshotManifest } from '../../../../shared/ports/repository.js';
import { ensureSetTimes } from '../../../env/set-times.js';

const MiB = 1024 * 1024;
/** Smaller chunks than file mode's 1 MiB average so a few MiB exercise many chunks and content lists. */
const CHUNKING: ChunkingParams = {
  minSize: 16 * 1024,
  avgSize: 64 * 1024,
  maxSize: 256 * 1024,
  normalization: 2,
};
const rootOf = (manifest: SnapshotManifest): string | undefined =>
  manifest.kind === 'file' ? manifest.root : undefined;
const clock: Clock = { now: () => new Date('2026-11-23T12:00:00.000Z') };
const owner = { uid: 0, gid: 0, mtimeNs: '1700000000000000000' };

async function repository(): Promise<OpenedRepository> {
  const store = new LocalDirectoryStore(await temp('file-mode-repo-'));
  return openRepository({
    store,
    keys: new LocalKeyWrapper(new Uint8Array(32).fill(3)),
    // Small packs, about one chunk each: garbage collection then deletes any blob it fails to mark.
    create: { packTargetBytes: 64 * 1024 },
    fileTreeReferences: fileTreeChildren,
  });
}

const temporaries: string[] = [];
/** A fresh directory under the system's temporary one, removed after the tests. */
async function temp(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  temporaries.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(temporaries.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** `touch -d` sets nanoseconds, which Node's utimes cannot. */
function touch(path: string, when: string): void {
  execFileSync('touch', ['-h', '-d', when, path]);
}

interface Observed {
  type: string;
  mode: number;
  uid: number;
  gid: number;
  size?: number;
  /** Exact: restores keep the nanoseconds the file system keeps. */
  mtimeNs: string;
  sha256?: string;
  target?: string;
  blocks?: number;
  nlink?: number;
}

/** Every entry under root by relative path (names as hex when not UTF-8-safe). */
async function observe(root: string): Promise<Map<string, Observed>> {
  const out = new Map<string, Observed>();
  const walk = async (dir: Buffer, rel: string): Promise<void> => {
    for (const name of (await readdir(dir, { encoding: 'buffer' })).sort(Buffer.compare)) {
      const path = Buffer.concat([dir, Buffer.from('/'), name]);
      const key = `${rel}/${name.toString('utf8') === name.toString('latin1') ? name.toString('utf8') : `hex:${name.toString('hex')}`}`;
      const s = await lstat(path, { bigint: true });
      const base = {
        mode: Number(s.mode & 0o7777n),
        uid: Number(s.uid),
        gid: Number(s.gid),
        mtimeNs: s.mtimeNs.toString(),
      };
      if (s.isDirectory()) {
        out.set(key, { type: 'dir', ...base });
        await walk(path, key);
      } else if (s.isSymbolicLink()) {
        out.set(key, {
          type: 'symlink',
          ...base,
          mode: 0,
          target: (await readlink(path, { encoding: 'buffer' })).toString('hex'),
        });
      } else if (s.isFile()) {
        out.set(key, {
          type: 'file',
          ...base,
          size: Number(s.size),
          sha256: createHash('sha256')
            .update(await readFile(path))
            .digest('hex'),
          blocks: Number(s.blocks),
          nlink: Number(s.nlink),
        });
      } else out.set(key, { type: 'other', ...base });
    }
  };
  await walk(Buffer.from(root), '');
  return out;
}

/** Equal entry by entry, mtimes to the nanosecond. */
function expectSameTree(actual: Map<string, Observed>, expected: Map<string, Observed>): void {
  expect([...actual.keys()]).toEqual([...expected.keys()]);
  for (const [path, want] of expected) expect({ path, ...actual.get(path) }).toEqual({ path, ...want });
}

let setTimes = '';
beforeAll(async () => {
  setTimes = await ensureSetTimes();
});
/** Times set to the nanosecond, through the helper the task's image carries. */
const exactTimes = (): FileTimes => nanosecondTimes(setTimes);

/** Distinct chunks (by SHA-256) of some bytes, cut as the backup cuts them. */
function chunkHashes(data: Uint8Array): Set<string> {
  const chunker = new ContentChunker(CHUNKING);
  const chunks = [...chunker.push(data)];
  const last = chunker.finish();
  if (last) chunks.push(last);
  return new Set(chunks.map((c) => createHash('sha256').update(c).digest('hex')));
}

/** Incompressible bytes that are the same every run (AES-CTR of zeros), so chunk counts are too. */
function pseudoRandom(seed: number, length: number): Buffer {
  const cipher = createCipheriv('aes-256-ctr', Buffer.alloc(32, seed), Buffer.alloc(16));
  return cipher.update(Buffer.alloc(length));
}

const random = pseudoRandom(1, 6 * MiB);
const compressible = Buffer.from('The quick brown fox jumps over the lazy dog. '.repeat(100_000));
const duplicate = pseudoRandom(2, 2 * MiB);

/** The source tree: one of each kind of entry the data mover must keep. */
async function buildTree(): Promise<{ root: string; fifo: string }> {
  const root = await temp('file-mode-src-');
  await mkdir(join(root, 'nested/a/b/c'), { recursive: true });
  await writeFile(join(root, 'nested/a/b/c/deep.txt'), 'deep\n');
  await writeFile(join(root, 'nested/a/small.txt'), 'hello\n');
  await writeFile(join(root, 'random.bin'), random);
  await writeFile(join(root, 'compressible.txt'), compressible);
  await writeFile(join(root, 'dup-1.bin'), duplicate);
  await writeFile(join(root, 'nested/dup-2.bin'), duplicate);
  await writeFile(join(root, 'empty'), '');
  await mkdir(join(root, 'empty-dir'));

  // Sparse: 64 MiB with data at 1 MiB + 100 (crossing a block boundary) and 40 MiB, a hole at the end.
  const sparse = join(root, 'sparse.img');
  const handle = await open(sparse, 'w');
  await handle.truncate(64 * MiB);
  await handle.write(randomBytes(5000), 0, 5000, MiB + 100);
  await handle.write(randomBytes(300 * 1024), 0, 300 * 1024, 40 * MiB);
  await handle.close();

  await symlink('nested/a/small.txt', join(root, 'link-relative'));
  await symlink('/nonexistent/target', join(root, 'link-dangling'));
  await link(join(root, 'nested/a/small.txt'), join(root, 'hard-link'));
  await writeFile(join(root, Buffer.from('name-\xff-latin1', 'latin1').toString('latin1')), 'x');
  // A name that is not UTF-8 at all: raw bytes.
  await writeFile(Buffer.concat([Buffer.from(`${root}/raw-`), Buffer.from([0xff, 0xfe])]), 'raw');

  await writeFile(join(root, 'secret'), 's');
  await chmod(join(root, 'secret'), 0o600);
  await writeFile(join(root, 'script.sh'), '#!/bin/sh\n');
  await chmod(join(root, 'script.sh'), 0o755);
  await writeFile(join(root, 'setuid'), 'u');
  await chown(join(root, 'setuid'), 0, 0);
  await chmod(join(root, 'setuid'), 0o4755);
  await mkdir(join(root, 'shared'));
  await chown(join(root, 'shared'), 4321, 8765);
  await chmod(join(root, 'shared'), 0o2775);
  await mkdir(join(root, 'tmp'));
  await chmod(join(root, 'tmp'), 0o1777);
  await writeFile(join(root, 'shared/theirs'), 'theirs');
  await chown(join(root, 'shared/theirs'), 1234, 5678);
  await chmod(join(root, 'shared/theirs'), 0o640);
  await lchown(join(root, 'link-relative'), 1111, 2222);

  const fifo = join(root, 'pipe');
  execFileSync('mkfifo', [fifo]);

  for (const p of ['nested/a/b/c/deep.txt', 'random.bin', 'sparse.img', 'link-relative', 'shared/theirs'])
    touch(join(root, p), '2021-02-03 04:05:06.123456789');
  for (const p of ['nested/a/b/c', 'nested/a/b', 'nested/a', 'nested', 'shared', 'tmp', 'empty-dir'])
    touch(join(root, p), '2020-01-02 03:04:05.987654321');
  await chmod(root, 0o750);
  touch(root, '2019-05-06 07:08:09.5');
  return { root, fifo };
}

describe('file mode round trip', () => {
  let source: string;
  let repo: OpenedRepository;
  let expected: Map<string, Observed>;

  beforeAll(async () => {
    expect(process.getuid?.(), 'file mode tests run as root, as the data mover does').toBe(0);
    ({ root: source } = await buildTree());
    repo = await repository();
    expected = await observe(source);
    expected.delete('/pipe');
  });

  it('restores contents, modes, ownership, symlinks, mtimes, hard links and holes identically', async () => {
    // Prepare
    const progress: FileBackupProgress[] = [];
    // Act
    const backup = await backupFileTree({
      repository: repo,
      clock,
      root: source,
      manifestId: 'full-1',
      tags: { 'velero.io/backup': 'b1' },
      chunking: CHUNKING,
      onProgress: (p) => progress.push(p),
    });
    const target = join(await temp('file-mode-dst-'), 'restored');
    const restored = await restoreFileTree({
      repository: repo,
      times: exactTimes(),
      manifestId: 'full-1',
      target,
    });

    // Assess: the tree, entry by entry.
    const actual = await observe(target);
    expectSameTree(actual, expected);
    const rootStats = await lstat(target, { bigint: true });
    const sourceRoot = await lstat(source, { bigint: true });
    expect(Number(rootStats.mode & 0o7777n)).toBe(0o750);
    expect(rootStats.mtimeNs).toBe(sourceRoot.mtimeNs);
    expect(restored.timePrecision).toBe('nanosecond');

    // Holes: the sparse file has as few blocks allocated as the source (its two data regions).
    const sparse = actual.get('/sparse.img') as Observed;
    expect(sparse.blocks).toBe(expected.get('/sparse.img')?.blocks);
    expect((sparse.blocks ?? 0) * 512).toBeLessThan(400 * 1024);
    expect(sparse.size).toBe(64 * MiB);
    // Hard links: one inode, two names.
    const small = await lstat(join(target, 'nested/a/small.txt'));
    expect((await lstat(join(target, 'hard-link'))).ino).toBe(small.ino);
    expect(small.nlink).toBe(2);

    // Figures: the FIFO skipped, duplicates deduplicated, the manifest written with its stats.
    expect(backup.skipped).toEqual([{ path: 'pipe', reason: 'a FIFO' }]);
    expect(backup).toMatchObject({ symlinks: 2, hardLinks: 1, directories: 8 });
    expect(backup.chunksDeduplicated).toBeGreaterThanOrEqual(chunkHashes(duplicate).size);
    const fileBytes = [...expected.values()].reduce((n, e) => n + (e.type === 'file' ? (e.size ?? 0) : 0), 0);
    const linkedBytes = expected.get('/hard-link')?.size ?? 0;
    expect(backup.manifest).toMatchObject({ kind: 'file', id: 'full-1', tags: { 'velero.io/backup': 'b1' } });
    expect(backup.manifest.stats.totalBytes).toBe(fileBytes - linkedBytes);
    expect(backup.manifest.stats.storedBytes).toBeLessThan(random.length + 2 * MiB + 400 * 1024 + MiB);
    expect(await repo.readManifest('full-1')).toEqual(backup.manifest);
    expect(restored).toMatchObject({ files: backup.files, symlinks: 2, hardLinks: 1, directories: 8 });
    // Holes were not written: far fewer bytes than the file's size.
    expect(restored.bytesWritten).toBeLessThan(fileBytes - linkedBytes - 60 * MiB);

    // Progress: monotone, ending at the total.
    const last = progress[progress.length - 1] as FileBackupProgress;
    expect(last.bytesDone).toBe(last.bytesTotal);
    expect(last.bytesTotal).toBe(fileBytes - linkedBytes);
    for (let i = 1; i < progress.length; i++)
      expect(progress[i]?.bytesDone).toBeGreaterThanOrEqual(progress[i - 1]?.bytesDone ?? 0);
  });

  it('stores only the changed chunks on a second backup, and with a parent reads only the changed file', async () => {
    // Prepare: one byte of the large file changes after a first backup.
    const before = await backupFileTree({
      repository: repo,
      clock,
      root: source,
      manifestId: 'before',
      chunking: CHUNKING,
    });
    const changed = Buffer.from(random);
    changed[3 * MiB + 12345] = (changed[3 * MiB + 12345] ?? 0) ^ 0xff;
    await writeFile(join(source, 'random.bin'), changed);
    const oldChunks = chunkHashes(random);
    const newChunks = [...chunkHashes(changed)].filter((h) => !oldChunks.has(h)).length;

    // Act
    const again = await backupFileTree({
      repository: repo,
      clock,
      root: source,
      manifestId: 'after',
      chunking: CHUNKING,
    });
    const incremental = await backupFileTree({
      repository: repo,
      clock,
      root: source,
      manifestId: 'after-incremental',
      parent: 'before',
      chunking: CHUNKING,
    });

    // Assess: the edit touched one or two chunks, and only those were stored.
    expect(newChunks).toBeGreaterThanOrEqual(1);
    expect(newChunks).toBeLessThanOrEqual(2);
    expect(again.chunks - again.chunksDeduplicated).toBe(newChunks);
    expect(again.manifest.stats.bytesRead).toBe(before.manifest.stats.bytesRead);
    // With the parent, every other file is taken unread from it, and nothing new is stored.
    expect(incremental.filesUnchanged).toBe(incremental.files - 1);
    expect(incremental.manifest.stats.bytesRead).toBe(changed.length);
    expect(incremental.chunks - incremental.chunksDeduplicated).toBe(0);
    expect(rootOf(incremental.manifest)).toBe(rootOf(again.manifest));

    const target = await temp('file-mode-dst-');
    await restoreFileTree({ repository: repo, times: exactTimes(), manifestId: 'after-incremental', target });
    const sha = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');
    expect(sha(await readFile(join(target, 'random.bin')))).toBe(sha(changed));
    expect(sha(await readFile(join(target, 'compressible.txt')))).toBe(sha(compressible));
  });

  it('walks a re-run once, its progress total the parent’s until the walk has found it all', async () => {
    // Prepare
    const parent = await repo.readManifest('full-1');
    const measured: FileBackupProgress[] = [];
    const estimated: FileBackupProgress[] = [];

    // Act: a full backup, and a re-run against full-1.
    const full = await backupFileTree({
      repository: repo,
      clock,
      root: source,
      manifestId: 'progress-full',
      chunking: CHUNKING,
      onProgress: (p) => measured.push(p),
    });
    const rerun = await backupFileTree({
      repository: repo,
      clock,
      root: source,
      manifestId: 'progress-rerun',
      parent: 'full-1',
      chunking: CHUNKING,
      onProgress: (p) => estimated.push(p),
    });

    // Assess: measured first without a parent; with one, no walk ran before the backup's own
    // (its first report knows of fewer files than there are), the parent's total stands in, and
    // the last report has the exact totals.
    const files = full.files;
    expect(measured[0]).toMatchObject({ totalKnown: true, filesTotal: files });
    expect(measured[0]?.bytesTotal).toBe(full.manifest.stats.totalBytes);
    const first = estimated[0] as FileBackupProgress;
    const last = estimated.at(-1) as FileBackupProgress;
    expect(first.totalKnown).toBe(false);
    expect(first.filesTotal).toBeLessThan(files);
    expect(first.bytesTotal).toBeGreaterThanOrEqual(parent.stats.totalBytes);
    for (const p of estimated.slice(0, -1)) expect(p.totalKnown).toBe(false);
    expect(last).toMatchObject({
      totalKnown: true,
      filesTotal: rerun.files,
      filesDone: rerun.files,
      bytesTotal: rerun.manifest.stats.totalBytes,
      bytesDone: rerun.manifest.stats.totalBytes,
    });
  });

  it('restores again into the same directory, replacing what was changed there since', async () => {
    const target = await temp('file-mode-dst-');
    await restoreFileTree({ repository: repo, times: exactTimes(), manifestId: 'full-1', target });
    await writeFile(join(target, 'nested/a/b/c/deep.txt'), 'changed');
    await rm(join(target, 'shared'), { recursive: true });
    await symlink('/etc', join(target, 'shared'));
    await restoreFileTree({ repository: repo, times: exactTimes(), manifestId: 'full-1', target });
    expectSameTree(await observe(target), expected);
  });

  it('gives every file its recorded group in a target that hands its own group on (setgid)', async () => {
    // Prepare: a target of another group, setgid, with a kept setgid directory of that group.
    const target = await temp('file-mode-setgid-');
    await mkdir(join(target, 'nested'));
    for (const dir of [target, join(target, 'nested')]) {
      await chown(dir, 0, 4444);
      await chmod(dir, 0o2770);
    }

    // Act
    await restoreFileTree({ repository: repo, times: exactTimes(), manifestId: 'full-1', target });

    // Assess: root's own files are root's group, not the target's (created there, then chowned).
    expectSameTree(await observe(target), expected);
  });

  it('keeps every blob a live file snapshot uses through garbage collection', async () => {
    // Prepare: only the incremental snapshot stays; a snapshot of a file nothing else holds goes,
    // so some packs hold dead blobs only (others, mixing dead and live blobs, are kept whole).
    const doomed = await temp('file-mode-doomed-');
    const unique = randomBytes(MiB);
    await writeFile(join(doomed, 'unique.bin'), unique);
    await backupFileTree({ repository: repo, clock, root: doomed, manifestId: 'doomed', chunking: CHUNKING });
    for (const id of ['full-1', 'before', 'after', 'doomed']) await repo.deleteManifest(id);
    // Act: a run condemns dead packs and deletes them once no writer that could use them is open.
    const first = await repo.collectGarbage();
    const second = await repo.collectGarbage();
    // Assess
    expect(first.bytesFreed + second.bytesFreed).toBeGreaterThanOrEqual(unique.length);
    expect((await repo.verify()).problems).toEqual([]);
    const target = await temp('file-mode-dst-');
    await restoreFileTree({ repository: repo, times: exactTimes(), manifestId: 'after-incremental', target });
    const restored = await observe(target);
    const current = await observe(source);
    current.delete('/pipe');
    expectSameTree(restored, current);
  });

  it('skips an entry that vanishes during the walk, naming it, and backs up the rest', async () => {
    const root = await temp('file-mode-vanish-');
    await writeFile(join(root, 'a-first'), 'first');
    await writeFile(join(root, 'z-later'), 'later');
    const result = await backupFileTree({
      repository: repo,
      clock,
      root,
      manifestId: 'vanishing',
      chunking: CHUNKING,
      // One file read at a time: the second is opened only once the first is read.
      concurrency: 1,
      // Listed, then deleted while the first file is read: the backup finds it gone.
      onProgress: (p) => {
        if (p.bytesDone > 0) rmSync(join(root, 'z-later'), { force: true });
      },
    });
    expect(result.skipped).toEqual([{ path: 'z-later', reason: 'vanished during the backup' }]);
    const target = await temp('file-mode-dst-');
    await restoreFileTree({ repository: repo, times: exactTimes(), manifestId: 'vanishing', target });
    expect(await readdir(target)).toEqual(['a-first']);
  });

  it('stops when aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      backupFileTree({
        repository: repo,
        clock,
        root: source,
        manifestId: 'aborted',
        signal: controller.signal,
      }),
    ).rejects.toMatchObject({ name: 'AbortError' });
    await expect(repo.readManifest('aborted')).rejects.toThrow('not in the repository');
  });
});

describe('file mode restore of a hostile tree', () => {
  /** Writes tree blobs (pages last to first) and a manifest naming the first, unchecked. */
  async function hostileSnapshot(
    repo: OpenedRepository,
    id: string,
    pages: readonly (readonly unknown[])[],
    blobs: readonly Uint8Array[] = [],
  ): Promise<void> {
    const writer = repo.writer();
    for (const blob of blobs) await writer.putBlob(blob);
    const more: string[] = [];
    for (const page of pages.slice(1).reverse())
      more.unshift((await writer.putBlob(encodeTreeBlob({ entries: page as FileTreeEntry[] }))).id);
    const root = await writer.putBlob(encodeTreeBlob({ entries: (pages[0] ?? []) as FileTreeEntry[], more }));
    await writer.flush();
    await repo.writeManifest({
      kind: 'file',
      id,
      createdAt: clock.now().toISOString(),
      tags: {},
      root: root.id,
      stats: { totalBytes: 0, bytesRead: 0, rawBytesStored: 0, storedBytes: 0, blobsDeduplicated: 0 },
    });
    await writer.close();
  }

  async function places(): Promise<{ target: string; outside: string; parent: string }> {
    const parent = await temp('file-mode-hostile-');
    const outside = join(parent, 'outside');
    await mkdir(outside);
    await writeFile(join(outside, 'secret'), 'secret');
    return { parent, outside, target: join(parent, 'target') };
  }

  it.each([
    ['..', 'is not allowed'],
    ['../outside', "contains '/'"],
    ['/etc', "contains '/'"],
  ])('refuses an entry named %j before creating it', async (name, reason) => {
    const repo = await repository();
    const { target, outside } = await places();
    await hostileSnapshot(repo, 'evil', [
      [{ name, type: 'file', mode: 0o644, ...owner, size: 0, content: [] }],
    ]);
    const restore = restoreFileTree({ repository: repo, times: exactTimes(), manifestId: 'evil', target });
    await expect(restore).rejects.toBeInstanceOf(HostileFileTree);
    await expect(
      restoreFileTree({ repository: repo, times: exactTimes(), manifestId: 'evil', target }),
    ).rejects.toThrow(reason);
    expect(await readdir(outside)).toEqual(['secret']);
    expect(await readdir(target)).toEqual([]);
  });

  it('never writes through a symlink a tree listed earlier under the same name', async () => {
    const repo = await repository();
    const { target, outside } = await places();
    const data = Buffer.from('pwned');
    const blob = repo.writer().blobId(data);
    await hostileSnapshot(
      repo,
      'evil',
      [
        [{ name: 'evil', type: 'symlink', ...owner, target: outside }],
        [{ name: 'evil', type: 'file', mode: 0o644, ...owner, size: 5, content: [[0, 5, blob]] }],
      ],
      [data],
    );
    await restoreFileTree({ repository: repo, times: exactTimes(), manifestId: 'evil', target });
    expect(await readdir(outside)).toEqual(['secret']);
    expect(await readFile(join(target, 'evil'), 'utf8')).toBe('pwned');
    expect((await lstat(join(target, 'evil'))).isFile()).toBe(true);
  });

  it('refuses a hard link through a symlink out of the target', async () => {
    const repo = await repository();
    const { target, outside } = await places();
    await hostileSnapshot(repo, 'evil', [
      [
        { name: 's', type: 'symlink', ...owner, target: outside },
        { name: 'z', type: 'hardlink', linkTo: ['s', 'secret'] },
      ],
    ]);
    await expect(
      restoreFileTree({ repository: repo, times: exactTimes(), manifestId: 'evil', target }),
    ).rejects.toThrow("the hard link's target s/secret is not a file restored before it");
    expect((await lstat(join(outside, 'secret'))).nlink).toBe(1);
  });

  it('refuses a piece whose blob is not as long as the entry says', async () => {
    const repo = await repository();
    const { target } = await places();
    const data = Buffer.from('short');
    const blob = repo.writer().blobId(data);
    await hostileSnapshot(
      repo,
      'evil',
      [[{ name: 'f', type: 'file', mode: 0o644, ...owner, size: 100, content: [[0, 50, blob]] }]],
      [data],
    );
    await expect(
      restoreFileTree({ repository: repo, times: exactTimes(), manifestId: 'evil', target }),
    ).rejects.toThrow('holds 5 bytes, the entry says 50');
  });
});

describe('file mode chunking of a repository', () => {
  it('uses the sizes a repository records, file mode defaults when it records none', () => {
    expect(chunkingOf(undefined)).toEqual(FILE_CHUNKING);
    expect(chunkingOf(fileChunkingRecord)).toEqual(FILE_CHUNKING);
    expect(
      chunkingOf({ algorithm: 'fastcdc-gear32-nc2', minBytes: 1024, averageBytes: 4096, maxBytes: 16384 }),
    ).toEqual({ minSize: 1024, avgSize: 4096, maxSize: 16384, normalization: 2 });
  });

  it('refuses a repository chunked by an algorithm it does not know', () => {
    expect(() => chunkingOf({ ...fileChunkingRecord, algorithm: 'rabin-v9' })).toThrow(
      'the repository chunks files with rabin-v9',
    );
  });
});
