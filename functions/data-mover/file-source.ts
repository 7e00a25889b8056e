/**
 * File mode: reading the source tree. Paths are Buffers end to end (Linux names are bytes);
 * nothing here follows a symlink. An entry that disappears while it is read is SourceVanished,
 * which the backup skips and lists; every other failure stops it.
 */
import { lstat, readdir } from 'node:fs/promises';
import type { FileTreeEntry } from '../../shared/domain/files/tree.js';

const SLASH = Buffer.from('/');

export const childPath = (dir: Buffer, name: Buffer): Buffer => Buffer.concat([dir, SLASH, name]);

const isGone = (error: unknown): boolean =>
  ['ENOENT', 'ENOTDIR', 'ELOOP'].includes((error as NodeJS.ErrnoException).code ?? '');

/** A source entry that disappeared (or was swapped) while the backup read it: skipped, not fatal. */
export class SourceVanished extends Error {}

/** An entry, why it is skipped, or (a regular file) either of them once its content is stored. */
export type Settled = FileTreeEntry | string;
export type Outcome = Settled | { readonly later: Promise<Settled> };

/** The outcome settled; a source entry that vanished meanwhile is skipped, not a failure. */
export async function vanishedAsSkipped(outcome: Promise<Outcome>): Promise<Settled> {
  try {
    const o = await outcome;
    return typeof o === 'object' && 'later' in o ? await o.later : o;
  } catch (error) {
    if (!(error instanceof SourceVanished)) throw error;
    return 'vanished during the backup';
  }
}

/**
 * A file system call on the source tree, its "gone" failures turned into SourceVanished, so only
 * those (never a repository error that happens to carry ENOENT) skip an entry.
 */
export async function fromSource<T>(operation: Promise<T>): Promise<T> {
  try {
    return await operation;
  } catch (error) {
    if (isGone(error)) throw new SourceVanished('vanished', { cause: error });
    throw error;
  }
}

/**
 * Sizes and count of the regular files under a directory, for the progress total; a file with
 * several names counts once, as the backup stores it once.
 */
export async function measureTree(
  root: Buffer,
  signal?: AbortSignal,
): Promise<{ readonly bytes: number; readonly files: number }> {
  const linked = new Set<string>();
  let bytes = 0;
  let files = 0;
  const walk = async (dir: Buffer): Promise<void> => {
    signal?.throwIfAborted();
    const names = await fromSource(readdir(dir, { encoding: 'buffer' })).catch((error: unknown) => {
      if (error instanceof SourceVanished) return [];
      throw error;
    });
    for (const name of names) {
      const path = childPath(dir, name);
      const stats = await fromSource(lstat(path)).catch((error: unknown) => {
        if (error instanceof SourceVanished) return undefined;
        throw error;
      });
      if (stats?.isDirectory()) await walk(path);
      else if (stats?.isFile()) {
        if (stats.nlink > 1) {
          const key = `${stats.dev}:${stats.ino}`;
          if (linked.has(key)) continue;
          linked.add(key);
        }
        bytes += stats.size;
        files++;
      }
    }
  };
  await walk(root);
  return { bytes, files };
}
