/**
 * One regular file's content into the repository: every byte in its pieces, and the reads it
 * costs counted (a backup of many small files pays per call on libuv's pool, never per byte).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, open, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FILE_READ_BYTES, storeFileContent } from '../../../../functions/data-mover/file-content.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import { LocalKeyWrapper } from '../../../../shared/adapters/local-key-wrapper.js';
import { openRepository } from '../../../../shared/adapters/repository/open-repository.js';
import { ContentChunker, FILE_CHUNKING } from '../../../../shared/domain/files/content-chunker.js';

describe('a file’s content', () => {
  it.each([
    ['a small file', 1000, 1],
    ['an empty file', 0, 1],
    ['a file of exactly one read', FILE_READ_BYTES, 2],
    ['a file of two and a half reads', 2.5 * FILE_READ_BYTES, 3],
  ])('of %s is stored whole, read to its end in as few reads as its size needs', async (_, size, reads) => {
    const root = await mkdtemp(join(tmpdir(), 'file-content-'));
    const data = randomBytes(size);
    await writeFile(join(root, 'f'), data);
    const repository = await openRepository({
      store: new LocalDirectoryStore(join(root, 'store')),
      keys: new LocalKeyWrapper(new Uint8Array(32).fill(3)),
    });
    const writer = repository.writer();
    const handle = await open(join(root, 'f'));
    let calls = 0;
    const read = handle.read.bind(handle);
    handle.read = ((...args: Parameters<typeof read>) => {
      calls++;
      return read(...args);
    }) as typeof handle.read;

    const stored = await storeFileContent({
      handle,
      sparse: false,
      writer,
      chunker: new ContentChunker(FILE_CHUNKING),
      buffer: new Uint8Array(FILE_READ_BYTES),
      onRead: () => undefined,
      onChunk: () => undefined,
    });
    await handle.close();
    await writer.flush();

    expect(calls).toBe(reads);
    expect(stored.size).toBe(size);
    const pieces = stored.content ?? [];
    const back = Buffer.concat(await repository.getBlobs(pieces.map((p) => p[2])));
    expect(back.equals(data)).toBe(true);
    await writer.close();
  });
});
