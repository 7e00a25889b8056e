/**
 * File mode: one regular file's content into the repository, and the chunking a repository
 * records. The file is read in 1 MiB pieces, cut by content-defined chunking, each chunk put as a
 * blob; a sparse file's zero blocks are left out as holes (the chunker restarts after each), so
 * the pieces `[offset, length, blob]` have gaps where the holes are. Memory: the caller's read
 * buffer and chunker (both reused from file to file), one chunk, and at most one content list of
 * pending pieces.
 * Never: keep a view of the read buffer past a read (the chunker copies).
 */
import type { FileHandle } from 'node:fs/promises';
import type { FileChunking } from '../../shared/contracts/repository.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import {
  type ChunkingParams,
  type ContentChunker,
  FILE_CHUNKING,
  FILE_CHUNKING_ALGORITHM,
} from '../../shared/domain/files/content-chunker.js';
import { zeroBlockRuns } from '../../shared/domain/files/holes.js';
import {
  CONTENT_LIST_PIECES,
  type ContentPiece,
  encodeContentList,
  type FileEntry,
  INLINE_PIECES,
} from '../../shared/domain/files/tree.js';
import type { BlobId, BlobWrite, RepositoryWriter } from '../../shared/ports/repository.js';

/** Bytes read from a file at once; a multiple of any file system's block size. */
export const FILE_READ_BYTES = 1024 * 1024;
/** Hole granularity: the page and ext4/xfs block size. */
const HOLE_BLOCK_BYTES = 4096;

/** The chunking a repository records (its format object), to create one with file mode's defaults. */
export const fileChunkingRecord: FileChunking = {
  algorithm: FILE_CHUNKING_ALGORITHM,
  minBytes: FILE_CHUNKING.minSize,
  averageBytes: FILE_CHUNKING.avgSize,
  maxBytes: FILE_CHUNKING.maxSize,
};

/**
 * The chunking to use with a repository: the one it records, so every writer cuts alike and
 * chunks deduplicate; file mode's defaults for a repository that records none.
 */
export function chunkingOf(recorded: FileChunking | undefined): ChunkingParams {
  if (!recorded) return FILE_CHUNKING;
  if (recorded.algorithm !== FILE_CHUNKING_ALGORITHM)
    throw new LifeboatError(
      `the repository chunks files with ${recorded.algorithm}; this data mover knows only ${FILE_CHUNKING_ALGORITHM}`,
    );
  return {
    minSize: recorded.minBytes,
    avgSize: recorded.averageBytes,
    maxSize: recorded.maxBytes,
    normalization: FILE_CHUNKING.normalization,
  };
}

export type StoredContent = Pick<FileEntry, 'size' | 'content' | 'contentLists'>;

export interface FileContentOptions {
  readonly handle: FileHandle;
  /** Look for holes (zero blocks) to leave out. */
  readonly sparse: boolean;
  readonly writer: RepositoryWriter;
  /** Reused from file to file (reset here): a chunker per file would allocate its chunk buffer each time. */
  readonly chunker: ContentChunker;
  /** Reused read buffer of FILE_READ_BYTES. */
  readonly buffer: Uint8Array;
  readonly onRead: (bytes: number) => void;
  readonly onChunk: (write: BlobWrite) => void;
  readonly signal?: AbortSignal;
}

/** Reads an open file to its end and stores its chunks; returns its size and pieces. */
export async function storeFileContent(options: FileContentOptions): Promise<StoredContent> {
  const { handle, sparse, writer, buffer, signal } = options;
  const signalOption = signal ? { signal } : {};
  // A previous file may have ended midway (vanished, aborted): this one starts a stream of its own.
  options.chunker.reset();
  const pieces: ContentPiece[] = [];
  const lists: BlobId[] = [];
  const putList = async (listed: readonly ContentPiece[]): Promise<void> => {
    lists.push((await writer.putBlob(encodeContentList(listed), signalOption)).id);
  };
  let offset = 0;
  /** Where the next chunk starts in the file; undefined while in a hole. */
  let chunkAt: number | undefined;
  const emit = async (chunk: Uint8Array): Promise<void> => {
    const write = await writer.putBlob(chunk, signalOption);
    options.onChunk(write);
    const at = chunkAt as number;
    pieces.push([at, chunk.length, write.id]);
    chunkAt = at + chunk.length;
    if (pieces.length === CONTENT_LIST_PIECES) await putList(pieces.splice(0));
  };
  const feed = async (data: Uint8Array, at: number): Promise<void> => {
    chunkAt ??= at;
    for (const chunk of options.chunker.push(data)) await emit(chunk);
  };
  const endRegion = async (): Promise<void> => {
    const last = options.chunker.finish();
    if (last) await emit(last);
    chunkAt = undefined;
  };
  for (let atEnd = false; !atEnd; ) {
    signal?.throwIfAborted();
    const asked = Math.min(buffer.length, FILE_READ_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, asked, offset);
    if (bytesRead === 0) break;
    // A regular file reads short only at its end: a small file costs one read, not two.
    atEnd = bytesRead < asked;
    const data = buffer.subarray(0, bytesRead);
    if (!sparse) await feed(data, offset);
    else
      for (const run of zeroBlockRuns(data, HOLE_BLOCK_BYTES)) {
        if (run.hole) await endRegion();
        else await feed(data.subarray(run.start, run.end), offset + run.start);
      }
    offset += bytesRead;
    options.onRead(bytesRead);
  }
  await endRegion();
  if (lists.length === 0 && pieces.length <= INLINE_PIECES) return { size: offset, content: pieces };
  if (pieces.length > 0) await putList(pieces);
  return { size: offset, contentLists: lists };
}
