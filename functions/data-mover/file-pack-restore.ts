/**
 * File mode, restore by pack: the contents of many files written together. Files are created as
 * the tree is walked and their pieces gathered here; once enough are gathered (by bytes, or by
 * open files), every distinct blob they need is read by pack (each pack range once, several at
 * once: Repository.forEachBlob) and written at each offset that uses it, into many files at once.
 * A file gets its attributes and is closed once all its pieces are written. Restic restores the
 * same way; one file after another made ~20,000 small ranged reads of the same packs.
 * Memory: the gathered pieces (a few numbers each) and the ranges in flight.
 * Never: write a blob whose length is not the piece's, or leave a file open after `flush`.
 */
import type { FileHandle } from 'node:fs/promises';
import { HostileFileTree } from '../../shared/domain/errors.js';
import type { ContentPiece, FileEntry } from '../../shared/domain/files/tree.js';
import type { BlobId, RepositoryReader } from '../../shared/ports/repository.js';
import type { FileCreation } from './file-create.js';

/** Piece bytes gathered before they are written: enough to span several packs. */
const BATCH_BYTES = 256 * 1024 * 1024;
/** Files held open, waiting for their pieces, at most. */
const BATCH_FILES = 512;

export interface PendingFile {
  readonly handle: FileHandle;
  readonly path: Buffer;
  readonly entry: FileEntry;
  /** The file's path as shown in errors. */
  readonly shown: string;
  /** What is left to do once its pieces are written (chown, chmod). */
  readonly creation: Pick<FileCreation, 'chown' | 'chmod'>;
  /** Bytes of its pieces gathered (the rest of its size is holes). */
  pieceBytes: number;
}

export class PackRestore {
  private pieces = new Map<BlobId, { file: PendingFile; offset: number; length: number }[]>();
  private bytes = 0;
  private files: PendingFile[] = [];

  constructor(
    private readonly options: {
      readonly repository: Pick<RepositoryReader, 'forEachBlob'>;
      /** Ranged reads in flight. */
      readonly concurrency: number;
      /** Called once per file, after its last piece is written: attributes, then close. */
      readonly finish: (file: PendingFile) => Promise<void>;
      readonly onWritten: (bytes: number) => void;
      readonly signal?: AbortSignal;
    },
  ) {}

  /** Gathers a created file's pieces; writes what is gathered whenever enough is. */
  async add(created: Omit<PendingFile, 'pieceBytes'>, pieces: AsyncIterable<ContentPiece>): Promise<void> {
    const file: PendingFile = { ...created, pieceBytes: 0 };
    this.files.push(file);
    for await (const [offset, length, id] of pieces) {
      const uses = this.pieces.get(id);
      if (uses) uses.push({ file, offset, length });
      else this.pieces.set(id, [{ file, offset, length }]);
      this.bytes += length;
      file.pieceBytes += length;
      if (this.bytes >= BATCH_BYTES) await this.writePieces();
    }
    if (this.files.length >= BATCH_FILES) await this.flush();
  }

  /** Writes every gathered piece and finishes every gathered file. */
  async flush(): Promise<void> {
    try {
      await this.writePieces();
      const files = this.files;
      this.files = [];
      await Promise.all(files.map((file) => this.options.finish(file)));
    } catch (error) {
      await this.abandon();
      throw error;
    }
  }

  /** Closes every file still open (after a failure). */
  async abandon(): Promise<void> {
    const files = this.files;
    this.files = [];
    this.pieces = new Map();
    await Promise.allSettled(files.map((file) => file.handle.close()));
  }

  private async writePieces(): Promise<void> {
    const pieces = this.pieces;
    this.pieces = new Map();
    this.bytes = 0;
    if (pieces.size === 0) return;
    const options = {
      concurrency: this.options.concurrency,
      ...(this.options.signal ? { signal: this.options.signal } : {}),
    };
    await this.options.repository.forEachBlob(
      pieces.keys(),
      async (id, data) => {
        const uses = pieces.get(id) ?? [];
        await Promise.all(
          uses.map(async ({ file, offset, length }) => {
            if (data.length !== length)
              throw new HostileFileTree(
                file.shown,
                `blob ${id} holds ${data.length} bytes, the entry says ${length}`,
              );
            await file.handle.write(data, 0, length, offset);
            this.options.onWritten(length);
          }),
        );
      },
      options,
    );
  }
}
