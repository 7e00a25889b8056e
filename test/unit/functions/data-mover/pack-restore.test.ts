/**
 * File mode restores by pack: many small files, some sharing content, and a large one, backed up
 * into small packs, then restored through a store that records every ranged read. Every file
 * comes back byte for byte with its mtime to the nanosecond, no pack range is read twice, and the
 * reads number the packs (plus the tree's own blobs), not the chunks.
 */
import { createCipheriv, createHash } from 'node:crypto';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backupFileTree } from '../../../../functions/data-mover/file-backup.js';
import { restoreFileTree } from '../../../../functions/data-mover/file-restore.js';
import { nanosecondTimes } from '../../../../functions/data-mover/file-times.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import { LocalKeyWrapper } from '../../../../shared/adapters/local-key-wrapper.js';
import { openRepository } from '../../../../shared/adapters/repository/open-repository.js';
import { fileTreeChildren } from '../../../../shared/domain/files/tree.js';
import { repositoryKeys } from '../../../../shared/domain/storage/keys.js';
import { ensureSetTimes } from '../../../env/set-times.js';
import { DelegatingStore } from '../../shared/adapters/repository/support.js';

const KiB = 1024;
const CHUNKING = { minSize: 16 * KiB, avgSize: 64 * KiB, maxSize: 256 * KiB, normalization: 2 };
const clock = { now: () => new Date('2026-11-27T12:00:00.000Z') };

/** A real store that records every read of a pack: its key, offset and length. */
class PackReadRecorder extends DelegatingStore {
  readonly reads: { key: string; offset: number; length: number }[] = [];
  recording = false;
  override getRange(
    key: string,
    range: { offset: number; length: number },
    options?: { signal?: AbortSignal },
  ): Promise<Uint8Array | undefined> {
    if (this.recording && key.startsWith(repositoryKeys.packsDir)) this.reads.push({ key, ...range });
    return super.getRange(key, range, options);
  }
  override get(key: string, options?: { signal?: AbortSignal }): Promise<Uint8Array | undefined> {
    if (this.recording && key.startsWith(repositoryKeys.packsDir))
      this.reads.push({ key, offset: 0, length: Number.POSITIVE_INFINITY });
    return super.get(key, options);
  }
}

function pseudoRandom(seed: number, length: number): Buffer {
  return createCipheriv('aes-256-ctr', Buffer.alloc(32, seed), Buffer.alloc(16)).update(Buffer.alloc(length));
}

const temporaries: string[] = [];
async function temp(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  temporaries.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(temporaries.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** Every regular file under root: its SHA-256 and mtime in nanoseconds, by relative path. */
async function filesOf(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const name of (await readdir(root, { recursive: true })).sort()) {
    const stats = await lstat(join(root, name), { bigint: true });
    if (!stats.isFile()) continue;
    const sha = createHash('sha256')
      .update(await readFile(join(root, name)))
      .digest('hex');
    out.set(name, `${sha} ${stats.mtimeNs}`);
  }
  return out;
}

describe('file mode restore by pack', () => {
  let helper: string;
  beforeAll(async () => {
    helper = await ensureSetTimes();
  });

  it('writes every file byte for byte, reading each pack range once, in about one read per pack', async () => {
    // Prepare: 400 small files (one batch: fewer than it holds open) (every fifth one a copy of another), a 3 MiB one, in 256 KiB packs.
    const source = await temp('pack-restore-src-');
    await mkdir(join(source, 'nested'));
    for (let i = 0; i < 400; i++) {
      const content =
        i % 5 === 4
          ? pseudoRandom(i - 1, 1000 + ((i - 1) % 7) * 1500)
          : pseudoRandom(i, 1000 + (i % 7) * 1500);
      await writeFile(join(source, i % 2 ? 'nested' : '', `f-${i}`), content);
    }
    await writeFile(join(source, 'large.bin'), pseudoRandom(9999, 3 * 1024 * KiB));
    const store = new PackReadRecorder(new LocalDirectoryStore(await temp('pack-restore-repo-')));
    const repository = await openRepository({
      store,
      keys: new LocalKeyWrapper(new Uint8Array(32).fill(5)),
      create: { packTargetBytes: 256 * KiB },
      fileTreeReferences: fileTreeChildren,
    });
    const backup = await backupFileTree({
      repository,
      clock,
      root: source,
      manifestId: 'm',
      chunking: CHUNKING,
    });
    const packs = (await store.list(repositoryKeys.packsDir)).length;
    // The blobs a restore reads one by one: tree pages and content lists, from the manifest's root.
    let metadataBlobs = 0;
    for (
      const pending = [backup.manifest.kind === 'file' ? backup.manifest.root : ''];
      pending.length > 0;
    ) {
      metadataBlobs++;
      pending.push(...fileTreeChildren(await repository.getBlob(pending.pop() as string)).nested);
    }

    // Act
    store.recording = true;
    const target = await temp('pack-restore-dst-');
    const result = await restoreFileTree({
      repository,
      manifestId: 'm',
      target,
      times: nanosecondTimes(helper),
    });

    // Assess: the files, exactly; no range read twice; a read per pack and tree blob, not per chunk.
    expect(await filesOf(target)).toEqual(await filesOf(source));
    expect(result.files).toBe(401);
    const seen = new Set<string>();
    for (const read of store.reads) {
      const range = `${read.key}@${read.offset}+${read.length}`;
      expect(seen.has(range), `read twice: ${range}`).toBe(false);
      seen.add(range);
    }
    expect(store.reads.length).toBeLessThanOrEqual(packs + metadataBlobs);
    expect(4 * store.reads.length).toBeLessThan(backup.chunks);
  });
});
