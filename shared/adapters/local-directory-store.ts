/**
 * The object store as a local directory: the embedded default of `lifeboat --local`.
 * Keys map to files under the root; writes go to a temporary file and are renamed into place,
 * so a reader never sees half an object, and a failed write (a full disk) removes its temporary
 * file; those of a killed process are removed by the next reader (removeTemporaries). Files are
 * the owner's alone (0600): backups and working data hold Secrets. Never follows a key outside
 * the root.
 */

import { randomBytes } from 'node:crypto';
import {
  createWriteStream,
  readFile as readFileCallback,
  rename as renameCallback,
  writeFile as writeFileCallback,
} from 'node:fs';
import { link, mkdir, open, readdir, rm, stat, unlink } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { AlreadyExists, LifeboatError } from '../domain/errors.js';
import type { ObjectStore, PutOptions } from '../ports/object-store.js';

// The callback forms, promisified: for the many small objects a backup writes and reads, less
// CPU and fewer thread-pool round trips than fs/promises, whose readFile and writeFile go
// through a FileHandle.
const writeFile = promisify(writeFileCallback);
const readFile = promisify(readFileCallback);
const rename = promisify(renameCallback);

/**
 * Temporary names: this tag is drawn once per module instance (a process, or a worker thread of
 * one), so a counter makes them unique among all writers of the directory without random bytes
 * per write. Short (a key's file name may be near the file system's 255 bytes): 48 random bits,
 * as the per-write random names had.
 */
const TMP_TAG = randomBytes(6).toString('hex');
let tmpCount = 0;
/** `<key>.tmp-<pid>-<tag>-<n>`: the writer's PID tells a later reader whether it is gone. */
const TMP_MARK = '.tmp-';
const TMP_NAME = /\.tmp-(?:(\d+)-)?[0-9a-f]+-[0-9a-z]+$/;
/** Files hold Secrets (the tarball, working data): readable by their owner only. */
const FILE_MODE = 0o600;
/** A temporary file with no PID in its name (an older writer's) is stale after this long. */
const UNNAMED_TMP_STALE_MS = 3_600_000;

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Directories remembered as created; past this many the memory starts over. */
const MAX_KNOWN_DIRS = 10_000;

export class LocalDirectoryStore implements ObjectStore {
  readonly location: string;
  private readonly root: string;
  /** Directories this store created or found: a put there skips mkdir until a write misses one. */
  private readonly knownDirs = new Set<string>();

  constructor(root: string) {
    this.root = resolve(root);
    this.location = `file://${this.root}`;
  }

  private path(key: string): string {
    const full = resolve(this.root, key);
    if (full !== this.root && !full.startsWith(this.root + sep)) {
      throw new LifeboatError(`object key escapes the store: ${key}`);
    }
    return full;
  }

  private async commit(tmp: string, target: string, options?: PutOptions): Promise<void> {
    if (options?.ifNoneMatch) {
      // link() fails if the target exists: an atomic create-if-absent.
      try {
        await link(tmp, target);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST')
          throw new AlreadyExists(`object ${relative(this.root, target)}`);
        throw error;
      } finally {
        await unlink(tmp).catch(() => undefined);
      }
      return;
    }
    await rename(tmp, target);
  }

  private tmpFor(target: string): string {
    tmpCount += 1;
    return `${target}${TMP_MARK}${process.pid}-${TMP_TAG}-${tmpCount.toString(36)}`;
  }

  private async makeDir(dir: string): Promise<void> {
    await mkdir(dir, { recursive: true });
    if (this.knownDirs.size >= MAX_KNOWN_DIRS) this.knownDirs.clear();
    this.knownDirs.add(dir);
  }

  async put(key: string, body: Uint8Array | string, options?: PutOptions): Promise<void> {
    const target = this.path(key);
    const dir = dirname(target);
    const tmp = this.tmpFor(target);
    if (!this.knownDirs.has(dir)) await this.makeDir(dir);
    try {
      try {
        await writeFile(tmp, body, { mode: FILE_MODE });
      } catch (error) {
        // The directory was removed since this store made it (by another writer or a clean-up).
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        this.knownDirs.delete(dir);
        await this.makeDir(dir);
        await writeFile(tmp, body, { mode: FILE_MODE });
      }
      await this.commit(tmp, target, options);
    } catch (error) {
      // A full disk, a killed stream: no half-written file stays behind.
      await unlink(tmp).catch(() => undefined);
      throw error;
    }
  }

  async putStream(key: string, body: AsyncIterable<Uint8Array>, options?: PutOptions): Promise<void> {
    const target = this.path(key);
    await mkdir(dirname(target), { recursive: true });
    const tmp = this.tmpFor(target);
    try {
      await pipeline(Readable.from(body), createWriteStream(tmp, { mode: FILE_MODE }));
      await this.commit(tmp, target, options);
    } catch (error) {
      await unlink(tmp).catch(() => undefined);
      throw error;
    }
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    try {
      return await readFile(this.path(key));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  /** Read from disk as it is consumed: a large tarball is never held whole. */
  async getStream(key: string): Promise<AsyncIterable<Uint8Array> | undefined> {
    try {
      return (await open(this.path(key), 'r')).createReadStream();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async getRange(key: string, range: { offset: number; length: number }): Promise<Uint8Array | undefined> {
    let file: import('node:fs/promises').FileHandle;
    try {
      file = await open(this.path(key), 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      const out = Buffer.alloc(range.length);
      let filled = 0;
      while (filled < range.length) {
        const { bytesRead } = await file.read(out, filled, range.length - filled, range.offset + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return out.subarray(0, filled);
    } finally {
      await file.close();
    }
  }

  async exists(key: string): Promise<boolean> {
    try {
      return (await stat(this.path(key))).isFile();
    } catch {
      return false;
    }
  }

  async size(key: string): Promise<number | undefined> {
    try {
      const found = await stat(this.path(key));
      return found.isFile() ? found.size : undefined;
    } catch {
      return undefined;
    }
  }

  async list(prefix: string): Promise<string[]> {
    const out: string[] = [];
    for await (const { key, name } of this.filesUnder(prefix))
      if (!name.includes(TMP_MARK) && key.startsWith(prefix)) out.push(key);
    return out.sort();
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  /** Removes temporary files under the prefix whose writer process is gone; the count removed. */
  async removeTemporaries(prefix: string): Promise<number> {
    let removed = 0;
    for await (const { full, key, name } of this.filesUnder(prefix)) {
      if (!name.includes(TMP_MARK) || !key.startsWith(prefix)) continue;
      if (!(await this.staleTemporary(full, name))) continue;
      await unlink(full).catch(() => undefined);
      removed++;
    }
    return removed;
  }

  /** Every file below the prefix's folder (a folder that cannot be read holds none), with its key. */
  private async *filesUnder(prefix: string): AsyncGenerator<{ full: string; key: string; name: string }> {
    const slash = prefix.lastIndexOf('/');
    const pending = [slash >= 0 ? this.path(prefix.slice(0, slash + 1)) : this.root];
    for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const entry of entries) {
        const full = join(dir, entry.name);
        if (entry.isDirectory()) pending.push(full);
        else yield { full, key: relative(this.root, full).split(sep).join('/'), name: entry.name };
      }
    }
  }

  /** A temporary file no running writer will finish: its PID's process is gone. */
  private async staleTemporary(full: string, name: string): Promise<boolean> {
    const match = TMP_NAME.exec(name);
    if (!match) return false;
    if (match[1] !== undefined) {
      const pid = Number(match[1]);
      return pid !== process.pid && !processAlive(pid);
    }
    const modified = await stat(full).then(
      (s) => s.mtimeMs,
      () => Date.now(),
    );
    return Date.now() - modified > UNNAMED_TMP_STALE_MS;
  }
}
