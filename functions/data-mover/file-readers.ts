/**
 * File mode, backup: the files read at once. Each reader owns a read buffer and a chunker, reused
 * from file to file, so what a file costs beyond its bytes is a few system calls, never an
 * allocation sized by the chunking; at most `count` files are open and being read, chunked and
 * stored at a time, so one file's blobs are compressed (on libuv's pool) while another is read
 * and hashed (on this thread).
 * Never: more than `count` files open, or one reader serving two files at once.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { type ChunkingParams, ContentChunker } from '../../shared/domain/files/content-chunker.js';
import type { BlobWrite, RepositoryWriter } from '../../shared/ports/repository.js';
import { FILE_READ_BYTES, type StoredContent, storeFileContent } from './file-content.js';
import { fromSource, SourceVanished } from './file-source.js';

interface Reader {
  readonly buffer: Uint8Array;
  readonly chunker: ContentChunker;
}

export interface FileReadersOptions {
  readonly count: number;
  readonly chunking: ChunkingParams;
  readonly writer: RepositoryWriter;
  readonly onRead: (bytes: number) => void;
  readonly onChunk: (write: BlobWrite) => void;
  readonly signal?: AbortSignal;
}

export class FileReaders {
  private readonly idle: Reader[] = [];
  private readonly waiting: ((reader: Reader) => void)[] = [];

  constructor(private readonly options: FileReadersOptions) {
    for (let i = 0; i < Math.max(1, options.count); i++)
      this.idle.push({
        buffer: new Uint8Array(FILE_READ_BYTES),
        chunker: new ContentChunker(options.chunking),
      });
  }

  private acquire(): Promise<Reader> {
    const reader = this.idle.pop();
    if (reader) return Promise.resolve(reader);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(reader: Reader): void {
    const next = this.waiting.shift();
    if (next) next(reader);
    else this.idle.push(reader);
  }

  /** Reads, chunks and stores the regular file lstat saw (`ino`); a sparse file's holes are left out. */
  async read(path: Buffer, ino: bigint): Promise<StoredContent> {
    const reader = await this.acquire();
    try {
      return await this.readWith(reader, path, ino);
    } finally {
      this.release(reader);
    }
  }

  private async readWith(reader: Reader, path: Buffer, ino: bigint): Promise<StoredContent> {
    const { signal } = this.options;
    signal?.throwIfAborted();
    // O_NOFOLLOW and O_NONBLOCK: a file swapped for a symlink or a FIFO since lstat is not read.
    const handle = await fromSource(
      open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK),
    );
    try {
      const stats = await handle.stat({ bigint: true });
      if (!stats.isFile() || stats.ino !== ino) throw new SourceVanished('replaced since it was listed');
      return await storeFileContent({
        handle,
        // Fewer blocks allocated than the size: the file has holes worth finding.
        sparse: stats.blocks * 512n < stats.size,
        writer: this.options.writer,
        chunker: reader.chunker,
        buffer: reader.buffer,
        ...(signal ? { signal } : {}),
        onRead: this.options.onRead,
        onChunk: this.options.onChunk,
      });
    } finally {
      await handle.close();
    }
  }
}
