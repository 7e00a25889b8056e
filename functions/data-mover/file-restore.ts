/**
 * File mode, restore: a file manifest's tree into a directory (docs/file-mode.md). Contents come
 * back at their offsets after the file is truncated to its size, so holes stay holes; then
 * ownership (when running as root), modes (after chown, which clears setuid/setgid), and mtimes,
 * directories last so their children do not touch their times. Symlinks are created, never
 * followed. A re-run into the same directory replaces what the first run left.
 *
 * Every tree blob is parsed strictly (shared/domain/file-tree): a name with `/`, `..` or NUL, or
 * a hard link through a symlink, is refused with HostileFileTree before anything is created
 * there. Never: write through an existing symlink (O_NOFOLLOW, O_EXCL on a fresh name), or touch
 * anything outside the target.
 */
import { constants } from 'node:fs';
import { chmod, chown, type FileHandle, lchown, link, lstat, mkdir, open, symlink } from 'node:fs/promises';
import { HostileFileTree, LifeboatError } from '../../shared/domain/errors.js';
import {
  CONTENT_LIST_FORMAT,
  type ContentPiece,
  type DirectoryAttributes,
  type FileEntry,
  type FileTreeEntry,
  parseFileTreeBlob,
  type RawName,
  rawNameBytes,
  TREE_FORMAT,
  type TreeBlob,
} from '../../shared/domain/files/tree.js';
import type { BlobId, Repository } from '../../shared/ports/repository.js';
import { type Creator, createAt, currentCreator, fileCreation } from './file-create.js';
import { PackRestore, type PendingFile } from './file-pack-restore.js';
import { type FileTimes, fileTimes } from './file-times.js';
import { TreeBlobsAhead } from './file-tree-ahead.js';

/** Deeper than any real tree (PATH_MAX is 4096 bytes): a hostile tree cannot recurse forever. */
const MAX_DEPTH = 2048;

export interface FileRestoreProgress {
  readonly bytesDone: number;
  readonly bytesTotal: number;
  readonly filesDone: number;
}

export interface FileRestoreOptions {
  readonly repository: Pick<Repository, 'readManifest' | 'getBlob' | 'forEachBlob'>;
  readonly manifestId: string;
  /** Created if missing; an existing directory (not a symlink) is restored into. */
  readonly target: string;
  /** Restore uid and gid (default: when running as root, the only user who can). */
  readonly ownership?: boolean;
  /** Pack ranges read at once (default 4): memory is about this many ranges (16 MiB at most each). */
  readonly concurrency?: number;
  /** How times are set (default: to the nanosecond with the set-times helper if it is there). */
  readonly times?: FileTimes;
  readonly onProgress?: (progress: FileRestoreProgress) => void;
  readonly signal?: AbortSignal;
}

export interface FileRestoreResult {
  readonly files: number;
  readonly directories: number;
  readonly symlinks: number;
  readonly hardLinks: number;
  /** Bytes of file data written (holes are not written). */
  readonly bytesWritten: number;
  /** What mtimes and atimes are exact to: nanoseconds with the set-times helper. */
  readonly timePrecision: FileTimes['precision'];
}

const SLASH = Buffer.from('/');
const childPath = (dir: Buffer, name: RawName): Buffer =>
  Buffer.concat([dir, SLASH, Buffer.from(rawNameBytes(name))]);
const shown = (names: readonly RawName[]): string =>
  names.map((n) => (typeof n === 'string' ? n : `base64:${n.base64}`)).join('/') || '.';

class TreeRestore {
  readonly counts = { files: 0, directories: 0, symlinks: 0, hardLinks: 0, bytesWritten: 0 };
  private bytesDone = 0;
  private readonly ownership: boolean;
  private readonly creator: Creator;
  readonly contents: PackRestore;
  /** The tree's blobs, read ahead by pack. */
  readonly trees: TreeBlobsAhead;

  constructor(
    private readonly options: FileRestoreOptions,
    private readonly root: Buffer,
    private readonly bytesTotal: number,
    private readonly times: FileTimes,
  ) {
    this.ownership = options.ownership ?? process.getuid?.() === 0;
    this.creator = currentCreator(this.ownership);
    this.trees = new TreeBlobsAhead(options);
    this.contents = new PackRestore({
      repository: options.repository,
      concurrency: options.concurrency ?? 4,
      finish: (file) => this.finishFile(file),
      onWritten: (bytes) => {
        this.counts.bytesWritten += bytes;
        this.bytesDone += bytes;
        this.progress();
      },
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  private progress(): void {
    this.options.onProgress?.({
      bytesDone: this.bytesDone,
      bytesTotal: Math.max(this.bytesTotal, this.bytesDone),
      filesDone: this.counts.files,
    });
  }

  private async blob(id: BlobId): Promise<Uint8Array> {
    return this.trees.get(id);
  }

  async treePage(id: BlobId): Promise<TreeBlob> {
    const page = parseFileTreeBlob(await this.blob(id), id);
    if (page.format !== TREE_FORMAT)
      throw new HostileFileTree(id, 'a directory names a blob that is not a tree');
    return page;
  }

  /**
   * Restores a directory's entries into `path` (which exists); pages are read one at a time.
   * `ownGroup`: the directory belongs to the restoring group (what is created in it gets it).
   */
  async directory(options: {
    path: Buffer;
    at: readonly RawName[];
    first: TreeBlob;
    ownGroup: boolean;
  }): Promise<void> {
    const { path, at, first, ownGroup } = options;
    if (at.length > MAX_DEPTH) throw new HostileFileTree(shown(at), `nested deeper than ${MAX_DEPTH}`);
    const pages = first.more ?? [];
    for (let i = -1; i < pages.length; i++) {
      const page = i < 0 ? first : await this.treePage(pages[i] as BlobId);
      if (i >= 0 && (page.more || page.directory))
        throw new HostileFileTree(
          pages[i] as BlobId,
          'a further page of a directory has pages or attributes',
        );
      for (const entry of page.entries) {
        this.options.signal?.throwIfAborted();
        await this.entry({ dir: path, at: [...at, entry.name], entry, ownGroup });
      }
    }
  }

  /** One entry, created at once: only a name already taken (a previous run's) is cleared first. */
  private async entry(options: {
    dir: Buffer;
    at: readonly RawName[];
    entry: FileTreeEntry;
    ownGroup: boolean;
  }): Promise<void> {
    const { dir, at, entry } = options;
    const path = childPath(dir, entry.name);
    switch (entry.type) {
      case 'dir': {
        const made = await createAt(path, { keepDirectory: true, make: () => mkdir(path, { mode: 0o700 }) });
        const first = await this.treePage(entry.tree);
        // A directory made here in one of the restoring group is of that group; a kept one may not be.
        await this.directory({ path, at, first, ownGroup: made && options.ownGroup });
        await this.attributes(path, entry);
        this.counts.directories++;
        return;
      }
      case 'file':
        await this.file({ path, at, entry, ownGroup: options.ownGroup });
        return;
      case 'symlink': {
        const target = Buffer.from(rawNameBytes(entry.target));
        await createAt(path, { keepDirectory: false, make: () => symlink(target, path) });
        if (this.ownership) await lchown(path, entry.uid, entry.gid);
        await this.times.set(path, { atimeNs: entry.mtimeNs, mtimeNs: entry.mtimeNs, symlink: true });
        this.counts.symlinks++;
        return;
      }
      case 'hardlink': {
        const source = await this.linkSource(entry.linkTo, at);
        await createAt(path, { keepDirectory: false, make: () => link(source, path) });
        this.counts.hardLinks++;
        return;
      }
    }
  }

  /**
   * The restored file a hard link names: every component below the target a real directory, the
   * last a regular file, so a link never reaches through a symlink out of the target.
   */
  private async linkSource(linkTo: readonly RawName[], at: readonly RawName[]): Promise<Buffer> {
    let path = this.root;
    for (const [i, name] of linkTo.entries()) {
      path = childPath(path, name);
      const stats = await lstat(path).catch(() => undefined);
      const last = i === linkTo.length - 1;
      if (!stats || (last ? !stats.isFile() : !stats.isDirectory()))
        throw new HostileFileTree(
          shown(at),
          `the hard link's target ${shown(linkTo)} is not a file restored before it (through directories only)`,
        );
    }
    return path;
  }

  async attributes(path: Buffer | string, attributes: DirectoryAttributes): Promise<void> {
    if (this.ownership) await chown(path, attributes.uid, attributes.gid);
    await chmod(path, attributes.mode);
    await this.times.set(Buffer.from(path), { atimeNs: attributes.mtimeNs, mtimeNs: attributes.mtimeNs });
  }

  /** A file's pieces in order, from its entry or its content lists, checked against its size. */
  private async *pieces(entry: FileEntry, at: readonly RawName[]): AsyncGenerator<ContentPiece> {
    let end = 0;
    const check = (piece: ContentPiece): ContentPiece => {
      if (piece[0] < end || piece[0] + piece[1] > entry.size)
        throw new HostileFileTree(
          shown(at),
          'content pieces overlap, are out of order, or pass the file size',
        );
      end = piece[0] + piece[1];
      return piece;
    };
    for (const piece of entry.content ?? []) yield check(piece);
    for (const id of entry.contentLists ?? []) {
      const list = parseFileTreeBlob(await this.blob(id), id);
      if (list.format !== CONTENT_LIST_FORMAT)
        throw new HostileFileTree(id, 'a content list that is not one');
      for (const piece of list.pieces) yield check(piece);
    }
  }

  /**
   * Creates the file (at its size when it has holes, with its mode when its owner is already
   * right) and gathers its pieces, written by pack later.
   */
  private async file(options: {
    path: Buffer;
    at: readonly RawName[];
    entry: FileEntry;
    ownGroup: boolean;
  }): Promise<void> {
    const { path, at, entry } = options;
    const creation = fileCreation({ entry, creator: this.creator, ownGroup: options.ownGroup });
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
    let handle: FileHandle | undefined;
    await createAt(path, {
      keepDirectory: false,
      make: async () => {
        handle = await open(path, flags, creation.mode);
      },
    });
    const opened = handle as FileHandle;
    try {
      if (creation.truncate) await opened.truncate(entry.size);
    } catch (error) {
      await opened.close();
      throw error;
    }
    await this.contents.add(
      { handle: opened, path, entry, shown: shown(at), creation },
      this.pieces(entry, at),
    );
  }

  /** Once its pieces are written: ownership, mode (after chown, which clears setuid), times. */
  private async finishFile(file: PendingFile): Promise<void> {
    const { handle, entry, creation } = file;
    try {
      if (creation.chown) await handle.chown(entry.uid, entry.gid);
      if (creation.chmod) await handle.chmod(entry.mode);
    } finally {
      await handle.close();
    }
    await this.times.set(file.path, { atimeNs: entry.mtimeNs, mtimeNs: entry.mtimeNs });
    this.counts.files++;
    this.bytesDone += entry.size - file.pieceBytes;
    this.progress();
  }
}

/** Restores a file manifest into `target`; returns what was created. */
export async function restoreFileTree(options: FileRestoreOptions): Promise<FileRestoreResult> {
  const { repository, signal } = options;
  const manifest = await repository.readManifest(options.manifestId, signal ? { signal } : {});
  if (manifest.kind !== 'file')
    throw new LifeboatError(`manifest ${options.manifestId} is a ${manifest.kind} snapshot, not a file one`);
  await mkdir(options.target, { recursive: true });
  const targetStats = await lstat(options.target);
  if (!targetStats.isDirectory())
    throw new LifeboatError(`cannot restore into ${options.target}: not a directory (or a symlink to one)`);

  const root = Buffer.from(options.target);
  const times = options.times ?? fileTimes();
  const restore = new TreeRestore(options, root, manifest.stats.totalBytes, times);
  try {
    await restore.trees.prefetch(manifest.root);
    const first = await restore.treePage(manifest.root);
    // The root may have been there before: it is of the restoring group only if it says so.
    await restore.directory({ path: root, at: [], first, ownGroup: targetStats.gid === process.getegid?.() });
    await restore.contents.flush();
    if (first.directory) await restore.attributes(root, first.directory);
  } finally {
    await restore.contents.abandon();
    // Every time queued is applied (or has failed) before the restore ends either way.
    await times.close();
  }
  restore.counts.directories++;
  return { ...restore.counts, timePrecision: times.precision };
}
