/**
 * File mode, restore: creating each entry with as few system calls as its attributes allow. A
 * fresh target has nothing in the way, so each entry is created at once and only a name already
 * taken (a previous run's) is looked at and cleared; a file whose inline pieces cover it needs no
 * truncate (its writes make its size); and a file owned as it should be once created (by the
 * restoring user, in a directory of the restoring group) is created with its mode, needing no
 * chown or chmod. Restic and Kopia restore a small file with about as many calls: open, write, close.
 * Never: follow a symlink where an entry is created (callers pass O_NOFOLLOW | O_EXCL, mkdir, symlink
 * and link fail on any existing name), or give a file its mode before its owner is final.
 */
import { lstat, rm, unlink } from 'node:fs/promises';
import type { FileEntry } from '../../shared/domain/files/tree.js';

/** Removes what a previous run (or anything else) left at a name, keeping a real directory. */
export async function clearName(path: Buffer, keepDirectory: boolean): Promise<boolean> {
  const existing = await lstat(path).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  });
  if (!existing) return false;
  if (existing.isDirectory()) {
    if (keepDirectory) return true;
    // rm does not follow symlinks inside what it removes.
    await rm(path, { recursive: true, force: true });
  } else await unlink(path);
  return false;
}

/**
 * Runs `make` (which creates `path` and fails with EEXIST on any existing name); when the name is
 * taken it is cleared and `make` run again. Returns false when a directory there was kept
 * (`keepDirectory`) instead, true when `make` created the entry.
 */
export async function createAt(
  path: Buffer,
  options: { keepDirectory: boolean; make: () => Promise<void> },
): Promise<boolean> {
  try {
    await options.make();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  if (await clearName(path, options.keepDirectory)) return false;
  await options.make();
  return true;
}

/** Who is restoring: what a file created now gets without being asked. */
export interface Creator {
  /** Restore uid and gid (root only). */
  readonly ownership: boolean;
  readonly uid: number;
  readonly gid: number;
  /** The process's umask (0o777 when unknown: every mode is then set explicitly). */
  readonly umask: number;
}

export function currentCreator(ownership: boolean): Creator {
  let umask = 0o777;
  try {
    umask = process.umask();
  } catch {
    // Not readable here (a worker thread): modes are set explicitly.
  }
  return { ownership, uid: process.geteuid?.() ?? -1, gid: process.getegid?.() ?? -1, umask };
}

/** How a regular file is created and what is left to do once its pieces are written. */
export interface FileCreation {
  /** The mode `open` creates it with. */
  readonly mode: number;
  /** Whether its size must be set (holes, or pieces known only from content lists). */
  readonly truncate: boolean;
  readonly chown: boolean;
  readonly chmod: boolean;
}

/**
 * `ownGroup`: the file's directory belongs to the creator's group, so whether it passes its group
 * on (setgid, a grpid mount) or not, a file created in it gets that group.
 */
export function fileCreation(options: {
  entry: FileEntry;
  creator: Creator;
  ownGroup: boolean;
}): FileCreation {
  const { entry, creator, ownGroup } = options;
  const pieces = entry.content ?? [];
  const covered =
    entry.contentLists === undefined && pieces.reduce((bytes, piece) => bytes + piece[1], 0) === entry.size;
  const ownedAlready =
    !creator.ownership || (ownGroup && entry.uid === creator.uid && entry.gid === creator.gid);
  // setuid, setgid and sticky bits, and bits the umask would drop, are set by chmod after chown.
  const modeAtOpen = ownedAlready && (entry.mode & 0o7000) === 0 && (entry.mode & creator.umask) === 0;
  return {
    mode: modeAtOpen ? entry.mode : 0o600,
    truncate: !covered,
    chown: !ownedAlready,
    chmod: !modeAtOpen,
  };
}
