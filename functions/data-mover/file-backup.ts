/**
 * File mode, backup: a mounted directory tree into the repository (docs/file-mode.md). Files are
 * cut into content-defined chunks, each chunk a blob; every directory becomes a tree blob, written
 * after its children (bottom up), and the manifest names the root's. Modes, ownership,
 * nanosecond mtimes, symlinks (never followed) and hard links are kept; sparse files (fewer
 * allocated blocks than their size) have their zero blocks recorded as holes.
 *
 * Resumable: a re-run after a crash stores no chunk twice (the repository deduplicates), and with
 * a `parent` manifest files whose size, mtime and ctime are unchanged are not read at all.
 * Memory: one read buffer, one chunk, and the entries of the directories on the current path.
 * Never: follow a symlink, read a device or FIFO, or write the manifest before the blobs it names
 * are flushed.
 */
import type { BigIntStats } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import { LifeboatError } from '../../shared/domain/errors.js';
import { type ChunkingParams, FILE_CHUNKING } from '../../shared/domain/files/content-chunker.js';
import {
  type DirectoryAttributes,
  encodeTreeBlob,
  type FileEntry,
  type FileTreeEntry,
  type RawName,
  rawNameOf,
  treePages,
} from '../../shared/domain/files/tree.js';
import type { Clock } from '../../shared/ports/clock.js';
import type {
  BlobId,
  Repository,
  RepositoryWriter,
  SnapshotManifest,
} from '../../shared/ports/repository.js';
import {
  type Counters,
  type FileBackupProgress,
  fileManifestOf,
  progressOf,
  type WalkFound,
  zeroCounters,
} from './file-figures.js';
import { nameKey, ParentSnapshot, parentRootOf } from './file-parent.js';
import { FileReaders } from './file-readers.js';
import {
  childPath,
  fromSource,
  measureTree,
  type Outcome,
  type Settled,
  vanishedAsSkipped,
} from './file-source.js';

export { chunkingOf, fileChunkingRecord } from './file-content.js';

export type { FileBackupProgress } from './file-figures.js';

export interface SkippedEntry {
  /** Relative to the root, `/`-separated (not for building paths: names may be bytes). */
  readonly path: string;
  readonly reason: string;
}

export interface FileBackupOptions {
  readonly repository: Pick<
    Repository,
    'writer' | 'writeManifest' | 'readManifest' | 'getBlob' | 'forEachBlob'
  >;
  readonly clock: Clock;
  /** The mounted directory to back up. */
  readonly root: string;
  readonly manifestId: string;
  readonly tags?: Readonly<Record<string, string>>;
  /** A file manifest of the same tree: unchanged files reuse its pieces without being read. */
  readonly parent?: string;
  readonly chunking?: ChunkingParams;
  /** Files read at once (default 4), each with its own read buffer and chunker. */
  readonly concurrency?: number;
  /**
   * Walk the tree once first for the progress totals (default: only without a parent, whose
   * total stands in for them on a re-run, where the walk is most of the work).
   */
  readonly measure?: boolean;
  readonly onProgress?: (progress: FileBackupProgress) => void;
  readonly signal?: AbortSignal;
}

export interface FileBackupResult {
  readonly manifest: SnapshotManifest;
  readonly files: number;
  readonly directories: number;
  readonly symlinks: number;
  readonly hardLinks: number;
  /** Files whose pieces came from the parent snapshot unread. */
  readonly filesUnchanged: number;
  /** Content chunks put, and how many of them were already stored. */
  readonly chunks: number;
  readonly chunksDeduplicated: number;
  /** Sockets, FIFOs, devices, and entries that vanished during the walk. */
  readonly skipped: readonly SkippedEntry[];
}

/** Files read, chunked and stored at once by default: enough to keep both cores and the uploads busy. */
const DEFAULT_FILES_AT_ONCE = 4;

const shownPath = (names: readonly RawName[]): string =>
  names.map((n) => (typeof n === 'string' ? n : `base64:${n.base64}`)).join('/');

class TreeBackup {
  private readonly counters: Counters = zeroCounters();
  readonly skipped: SkippedEntry[] = [];
  /** The path holding each multiply-linked file's content (once known), by device and inode. */
  private readonly linked = new Map<string, Promise<readonly RawName[] | undefined>>();
  private readonly readers: FileReaders;
  /** Entries of one directory started and not yet settled, at most. */
  private readonly windowSize: number;
  readonly parent: ParentSnapshot | undefined;
  private readonly found: WalkFound = { bytes: 0, files: 0, estimate: 0, measured: false, walked: false };

  constructor(
    private readonly options: FileBackupOptions,
    private readonly writer: RepositoryWriter,
  ) {
    this.parent = options.parent
      ? new ParentSnapshot({
          repository: options.repository,
          writer,
          ...(options.signal ? { signal: options.signal } : {}),
        })
      : undefined;
    const files = Math.max(1, options.concurrency ?? DEFAULT_FILES_AT_ONCE);
    this.windowSize = files * 4;
    this.readers = new FileReaders({
      count: files,
      chunking: options.chunking ?? FILE_CHUNKING,
      writer,
      ...(options.signal ? { signal: options.signal } : {}),
      onRead: (bytes) => {
        this.counters.bytesRead += bytes;
        this.counters.bytesDone += bytes;
        this.progress();
      },
      onChunk: (write) => {
        this.counters.chunks++;
        if (!write.stored) this.counters.chunksDeduplicated++;
      },
    });
  }

  get figures(): Counters {
    return this.counters;
  }

  private progress(): void {
    this.options.onProgress?.(progressOf(this.counters, this.found));
  }

  /** Without a measuring walk first: the parent's total stands in until the walk has found more. */
  estimate(bytes: number): void {
    this.found.estimate = bytes;
  }

  /** The walk is over: what it found is the total. */
  walked(): void {
    this.found.walked = true;
    this.progress();
  }

  /** A regular file the walk reached (a file with several names: its first one). */
  private discovered(size: bigint): void {
    this.found.bytes += Number(size);
    this.found.files++;
  }

  private get signal(): AbortSignal | undefined {
    return this.options.signal;
  }

  private async put(data: Uint8Array): Promise<BlobId> {
    const write = await this.writer.putBlob(data, this.signal ? { signal: this.signal } : {});
    return write.id;
  }

  async measure(root: Buffer): Promise<void> {
    const total = await measureTree(root, this.signal);
    this.counters.bytesTotal = total.bytes;
    this.counters.filesTotal = total.files;
    this.found.measured = true;
    this.progress();
  }

  /** Backs up a directory's entries and writes its tree blob(s); returns the first page's id. */
  async directory(options: {
    path: Buffer;
    at: readonly RawName[];
    parentTree?: BlobId;
    /** The root's own attributes, kept in its tree blob. */
    self?: DirectoryAttributes;
  }): Promise<BlobId> {
    this.signal?.throwIfAborted();
    const { path, at } = options;
    const previous = options.parentTree ? await this.parent?.entries(options.parentTree) : undefined;
    const names = (await fromSource(readdir(path, { encoding: 'buffer' }))).sort(Buffer.compare);
    // The walk is sequential (the tree and its hard links come out the same every run); files'
    // contents are read behind it, several at once, with a window of them waiting per directory.
    const outcomes: Promise<Settled>[] = [];
    const window: Promise<Settled>[] = [];
    try {
      for (const nameBytes of names) {
        const name = rawNameOf(nameBytes);
        const entry = { path: childPath(path, nameBytes), at: [...at, name], name };
        const outcome = vanishedAsSkipped(this.entry({ ...entry, previous: previous?.get(nameKey(name)) }));
        // Handled now (awaited below): a failure while an earlier entry is awaited is no unhandled rejection.
        outcome.catch(() => undefined);
        outcomes.push(outcome);
        window.push(outcome);
        if (window.length >= this.windowSize) await window.shift();
      }
    } finally {
      // Nothing is left running when a walk fails: every file started is waited on.
      await Promise.allSettled(outcomes);
    }
    const entries: FileTreeEntry[] = [];
    for (const [i, outcome] of (await Promise.all(outcomes)).entries()) {
      if (typeof outcome !== 'string') entries.push(outcome);
      else this.skipped.push({ path: shownPath([...at, rawNameOf(names[i] as Buffer)]), reason: outcome });
    }
    this.counters.directories++;
    return this.writeTree(entries, options.self);
  }

  /** One entry, or why it is skipped; a regular file's is settled once its content is stored. */
  private async entry(options: {
    path: Buffer;
    at: readonly RawName[];
    name: RawName;
    previous: FileTreeEntry | undefined;
  }): Promise<Outcome> {
    const { path, at, name, previous } = options;
    const stats = await fromSource(lstat(path, { bigint: true }));
    const owner = { name, uid: Number(stats.uid), gid: Number(stats.gid), mtimeNs: stats.mtimeNs.toString() };
    const mode = Number(stats.mode & 0o7777n);
    if (stats.isDirectory()) {
      const tree = await this.directory({
        path,
        at,
        ...(previous?.type === 'dir' ? { parentTree: previous.tree } : {}),
      });
      return { ...owner, type: 'dir', mode, tree };
    }
    if (stats.isSymbolicLink()) {
      this.counters.symlinks++;
      return {
        ...owner,
        type: 'symlink',
        target: rawNameOf(await fromSource(readlink(path, { encoding: 'buffer' }))),
      };
    }
    if (!stats.isFile()) return stats.isFIFO() ? 'a FIFO' : stats.isSocket() ? 'a socket' : 'a device file';
    const file = (): Promise<FileTreeEntry> => this.file({ path, stats, owner, mode, previous });
    if (stats.nlink <= 1n) {
      this.discovered(stats.size);
      return { later: file() };
    }
    // A multiply-linked file: its first name backed up holds the content, later names link to it;
    // one that vanished while read is not restored, so the next name takes its place.
    const inode = `${stats.dev}:${stats.ino}`;
    const before = this.linked.get(inode);
    if (!before) this.discovered(stats.size);
    const outcome: Promise<Settled> = before
      ? before.then((linkTo): Settled | Promise<Settled> => {
          if (!linkTo) return vanishedAsSkipped(file());
          this.counters.hardLinks++;
          return { name, type: 'hardlink', linkTo };
        })
      : vanishedAsSkipped(file());
    this.linked.set(
      inode,
      outcome.then(
        (o) => (typeof o === 'string' ? undefined : o.type === 'hardlink' ? o.linkTo : at),
        () => undefined,
      ),
    );
    return { later: outcome };
  }

  /** A regular file's entry: its content stored, or its parent's pieces when it is unchanged. */
  private async file(options: {
    path: Buffer;
    stats: BigIntStats;
    owner: Pick<FileEntry, 'name' | 'uid' | 'gid' | 'mtimeNs'>;
    mode: number;
    previous: FileTreeEntry | undefined;
  }): Promise<FileTreeEntry> {
    const { path, stats, owner, mode, previous } = options;
    const ctimeNs = stats.ctimeNs.toString();
    const unchanged =
      previous?.type === 'file' &&
      previous.size === Number(stats.size) &&
      previous.mtimeNs === owner.mtimeNs &&
      previous.ctimeNs === ctimeNs &&
      (await this.parent?.stillStored(previous)) === true;
    const content = unchanged ? this.reused(previous) : await this.readers.read(path, stats.ino);
    this.counters.files++;
    this.counters.filesDone++;
    this.counters.totalBytes += content.size;
    this.progress();
    return { ...owner, type: 'file', mode, ctimeNs, ...content };
  }

  private reused(previous: FileEntry): Pick<FileEntry, 'size' | 'content' | 'contentLists'> {
    this.counters.filesUnchanged++;
    this.counters.bytesDone += previous.size;
    return {
      size: previous.size,
      ...(previous.contentLists
        ? { contentLists: previous.contentLists }
        : { content: previous.content ?? [] }),
    };
  }

  /** Writes a directory's entries as tree blobs: later pages first, the first one naming them. */
  private async writeTree(entries: readonly FileTreeEntry[], self?: DirectoryAttributes): Promise<BlobId> {
    const [first = [], ...rest] = treePages(entries);
    const more: BlobId[] = [];
    for (const page of rest) more.push(await this.put(encodeTreeBlob({ entries: page })));
    return this.put(encodeTreeBlob({ entries: first, more, ...(self ? { directory: self } : {}) }));
  }
}

/** Backs up the tree under `root` and writes a `file` manifest; returns it with the run's figures. */
export async function backupFileTree(options: FileBackupOptions): Promise<FileBackupResult> {
  const { repository, signal } = options;
  const root = Buffer.from(options.root);
  const rootStats = await lstat(root, { bigint: true }).catch((error: unknown) => {
    throw new LifeboatError(`cannot back up ${options.root}: ${(error as Error).message}`, { cause: error });
  });
  if (!rootStats.isDirectory()) throw new LifeboatError(`cannot back up ${options.root}: not a directory`);
  // The writer first: its lease and index load while the parent manifest is read.
  const writer = repository.writer();
  try {
    const parent = options.parent
      ? await parentRootOf({ repository, parentId: options.parent, ...(signal ? { signal } : {}) })
      : undefined;
    const parentRoot = parent?.root;
    // A writer answers `has` from the repository's index only once its session is open, and
    // flushing nothing waits for that: the parent's blobs are then seen, and reused unread.
    if (parentRoot) await writer.flush(signal ? { signal } : {});
    const backup = new TreeBackup(options, writer);
    if (parentRoot) await backup.parent?.prefetch(parentRoot);
    // A re-run's walk is most of its work: a second one for the totals would nearly double it.
    if (options.measure ?? parent === undefined) await backup.measure(root);
    else backup.estimate(parent?.totalBytes ?? 0);
    const rootTree = await backup.directory({
      path: root,
      at: [],
      ...(parentRoot ? { parentTree: parentRoot } : {}),
      self: {
        mode: Number(rootStats.mode & 0o7777n),
        uid: Number(rootStats.uid),
        gid: Number(rootStats.gid),
        mtimeNs: rootStats.mtimeNs.toString(),
      },
    });
    backup.walked();
    await writer.flush(signal ? { signal } : {});
    const figures = backup.figures;
    const manifest = fileManifestOf({ ...options, rootTree, figures, writes: writer.stats() });
    await repository.writeManifest(manifest, signal ? { signal } : {});
    return {
      manifest,
      files: figures.files,
      directories: figures.directories,
      symlinks: figures.symlinks,
      hardLinks: figures.hardLinks,
      filesUnchanged: figures.filesUnchanged,
      chunks: figures.chunks,
      chunksDeduplicated: figures.chunksDeduplicated,
      skipped: backup.skipped,
    };
  } finally {
    // Releases the writer's lease (after the manifest: writing it checks the lease is held).
    await writer.close?.().catch(() => undefined);
  }
}
