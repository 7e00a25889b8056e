/**
 * File mode's tree format (docs/file-mode.md): a snapshot of a directory tree is its root
 * directory's tree blob, named by the manifest's `root`. A tree blob is JSON listing one
 * directory's entries (or one page of them); a file's content is a list of pieces
 * `[offset, length, blobId]`, inline or in content-list blobs, and the gaps between pieces are
 * holes. Pure: encoding, strict parsing of what a repository hands back (a tree blob may be
 * hostile: names are checked so no entry can leave the directory it is listed in), and the
 * references garbage collection follows.
 *
 * Never: accept a name that is empty, `.`, `..`, or holds `/` or NUL; accept pieces out of order,
 * overlapping or past the file's size.
 */
import { HostileFileTree } from '../errors.js';
import { compareRawNames, displayName, type RawName, rawNameBytes } from './names.js';

export { compareRawNames, displayName, type RawName, rawNameBytes, rawNameOf } from './names.js';

/** A repository blob's id (the port's BlobId): 32 bytes of keyed hash, lowercase hex. */
export type BlobId = string;

export const TREE_FORMAT = 'lifeboat.file-tree';
export const CONTENT_LIST_FORMAT = 'lifeboat.file-content';
export const FILE_TREE_VERSION = 1;

/** Files with at most this many pieces list them inline; longer ones in content-list blobs. */
export const INLINE_PIECES = 32;
/** Pieces per content-list blob (about 0.8 MiB of JSON, 8 GiB of file at 1 MiB chunks). */
export const CONTENT_LIST_PIECES = 8192;
/** A directory's entries are split into tree blobs of about this many bytes of JSON. */
export const TREE_PAGE_BYTES = 1024 * 1024;

/** `[offset, length, blobId]`: file bytes [offset, offset+length) are the blob's. */
export type ContentPiece = readonly [offset: number, length: number, blob: BlobId];

interface EntryOwnership {
  readonly name: RawName;
  readonly uid: number;
  readonly gid: number;
  /** Modification time, nanoseconds since the epoch, as a decimal string (beyond 2^53). */
  readonly mtimeNs: string;
}

export interface FileEntry extends EntryOwnership {
  readonly type: 'file';
  /** Permission bits with setuid, setgid and sticky (mode & 0o7777). */
  readonly mode: number;
  readonly size: number;
  /**
   * Status change time when read, nanoseconds: with size and mtime, how a later backup naming
   * this snapshot as its parent knows the file is unchanged. Not restored (no system call sets it).
   */
  readonly ctimeNs?: string;
  /** Inline pieces; absent when `contentLists` holds them. */
  readonly content?: readonly ContentPiece[];
  readonly contentLists?: readonly BlobId[];
}

export interface DirectoryEntry extends EntryOwnership {
  readonly type: 'dir';
  readonly mode: number;
  readonly tree: BlobId;
}

export interface SymlinkEntry extends EntryOwnership {
  readonly type: 'symlink';
  /** Stored as read, never resolved: a target may point anywhere. */
  readonly target: RawName;
}

/** A further name of a file listed earlier in the walk (depth first, entries in order). */
export interface HardLinkEntry {
  readonly name: RawName;
  readonly type: 'hardlink';
  /** That file's path from the snapshot's root, one name per component. */
  readonly linkTo: readonly RawName[];
}

export type FileTreeEntry = FileEntry | DirectoryEntry | SymlinkEntry | HardLinkEntry;

/** A directory's own attributes; the snapshot's root directory has no parent entry to hold them. */
export interface DirectoryAttributes {
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
  readonly mtimeNs: string;
}

export interface TreeBlob {
  readonly format: typeof TREE_FORMAT;
  readonly version: number;
  /** Only on the root directory's first page: the root's own attributes. */
  readonly directory?: DirectoryAttributes;
  /** Sorted by name bytes, no name twice. */
  readonly entries: readonly FileTreeEntry[];
  /** Further pages of the same directory, in order (only on a directory's first page). */
  readonly more?: readonly BlobId[];
}

export interface ContentListBlob {
  readonly format: typeof CONTENT_LIST_FORMAT;
  readonly version: number;
  readonly pieces: readonly ContentPiece[];
}

export type FileTreeBlob = TreeBlob | ContentListBlob;

const encoder = new TextEncoder();

export function encodeTreeBlob(options: {
  entries: readonly FileTreeEntry[];
  more?: readonly BlobId[];
  directory?: DirectoryAttributes;
}): Uint8Array {
  const blob: TreeBlob = {
    format: TREE_FORMAT,
    version: FILE_TREE_VERSION,
    ...(options.directory ? { directory: options.directory } : {}),
    entries: options.entries,
    ...(options.more && options.more.length > 0 ? { more: options.more } : {}),
  };
  return encoder.encode(JSON.stringify(blob));
}

export function encodeContentList(pieces: readonly ContentPiece[]): Uint8Array {
  const blob: ContentListBlob = { format: CONTENT_LIST_FORMAT, version: FILE_TREE_VERSION, pieces };
  return encoder.encode(JSON.stringify(blob));
}

/**
 * Splits a directory's sorted entries into pages of about `pageBytes` of JSON each (at least one
 * entry a page, and one empty page for an empty directory).
 */
export function treePages(
  entries: readonly FileTreeEntry[],
  pageBytes: number = TREE_PAGE_BYTES,
): FileTreeEntry[][] {
  const pages: FileTreeEntry[][] = [[]];
  let bytes = 0;
  for (const entry of entries) {
    const size = JSON.stringify(entry).length + 1;
    const page = pages[pages.length - 1] as FileTreeEntry[];
    if (page.length > 0 && bytes + size > pageBytes) {
      pages.push([entry]);
      bytes = size;
    } else {
      page.push(entry);
      bytes += size;
    }
  }
  return pages;
}

// ---- parsing: everything a repository returns is checked before a restore acts on it ----

const BLOB_ID = /^[0-9a-f]{64}$/;
const DECIMAL = /^-?[0-9]{1,30}$/;

type Refuse = (where: string, reason: string) => never;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkBlobId(value: unknown, where: string, refuse: Refuse): BlobId {
  if (typeof value !== 'string' || !BLOB_ID.test(value)) refuse(where, 'not a blob id');
  return value;
}

function checkCount(value: unknown, where: string, refuse: Refuse, min = 0): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)
    refuse(where, `must be an integer of at least ${min}`);
  return value;
}

function checkRawName(value: unknown, where: string, refuse: Refuse): RawName {
  if (typeof value === 'string') return value;
  if (isRecord(value) && typeof value.base64 === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(value.base64))
    return { base64: value.base64 };
  return refuse(where, 'must be a string or { base64 }');
}

/** A name that stays inside its directory: not empty, `.` or `..`, no `/`, no NUL. */
function checkEntryName(value: unknown, where: string, refuse: Refuse): RawName {
  const name = checkRawName(value, where, refuse);
  const bytes = rawNameBytes(name);
  if (bytes.length === 0) refuse(where, 'an empty name');
  if (bytes.length > 255) refuse(where, 'a name longer than 255 bytes');
  if (bytes.includes(0x2f)) refuse(where, `the name ${JSON.stringify(displayName(name))} contains '/'`);
  if (bytes.includes(0)) refuse(where, 'the name contains a NUL byte');
  if ((bytes.length === 1 || bytes.length === 2) && bytes.every((b) => b === 0x2e))
    refuse(where, `the name ${JSON.stringify(displayName(name))} is not allowed`);
  return name;
}

function checkPieces(value: unknown, where: string, refuse: Refuse): ContentPiece[] {
  if (!Array.isArray(value)) return refuse(where, 'must be an array of [offset, length, blobId]');
  let end = 0;
  return value.map((piece, i) => {
    const at = `${where}[${i}]`;
    if (!Array.isArray(piece) || piece.length !== 3) refuse(at, 'must be [offset, length, blobId]');
    const offset = checkCount(piece[0], `${at}.offset`, refuse);
    const length = checkCount(piece[1], `${at}.length`, refuse, 1);
    const blob = checkBlobId(piece[2], `${at}.blob`, refuse);
    if (offset < end) refuse(at, 'pieces overlap or are out of order');
    end = offset + length;
    return [offset, length, blob] as const;
  });
}

function checkOwnership(
  raw: Record<string, unknown>,
  where: string,
  refuse: Refuse,
): Omit<EntryOwnership, 'name'> {
  const uid = checkCount(raw.uid, `${where}.uid`, refuse);
  const gid = checkCount(raw.gid, `${where}.gid`, refuse);
  if (uid > 0xffff_fffe || gid > 0xffff_fffe) refuse(where, 'uid or gid out of range');
  if (typeof raw.mtimeNs !== 'string' || !DECIMAL.test(raw.mtimeNs))
    refuse(`${where}.mtimeNs`, 'must be a decimal string');
  return { uid, gid, mtimeNs: raw.mtimeNs };
}

function checkMode(value: unknown, where: string, refuse: Refuse): number {
  const mode = checkCount(value, where, refuse);
  if (mode > 0o7777) refuse(where, 'must be permission bits (at most 0o7777)');
  return mode;
}

function checkEntry(raw: unknown, where: string, refuse: Refuse): FileTreeEntry {
  if (!isRecord(raw)) return refuse(where, 'must be an object');
  const name = checkEntryName(raw.name, `${where}.name`, refuse);
  const at = `${where} (${displayName(name)})`;
  switch (raw.type) {
    case 'file': {
      const size = checkCount(raw.size, `${at}.size`, refuse);
      if (raw.ctimeNs !== undefined && (typeof raw.ctimeNs !== 'string' || !DECIMAL.test(raw.ctimeNs)))
        refuse(`${at}.ctimeNs`, 'must be a decimal string');
      const base = {
        name,
        type: 'file' as const,
        mode: checkMode(raw.mode, `${at}.mode`, refuse),
        ...checkOwnership(raw, at, refuse),
        size,
        ...(typeof raw.ctimeNs === 'string' ? { ctimeNs: raw.ctimeNs } : {}),
      };
      if (raw.contentLists !== undefined) {
        if (raw.content !== undefined) refuse(at, 'has both content and contentLists');
        if (!Array.isArray(raw.contentLists)) refuse(`${at}.contentLists`, 'must be an array');
        const lists = raw.contentLists.map((id, i) => checkBlobId(id, `${at}.contentLists[${i}]`, refuse));
        return { ...base, contentLists: lists };
      }
      const content = checkPieces(raw.content, `${at}.content`, refuse);
      const last = content[content.length - 1];
      if (last && last[0] + last[1] > size) refuse(`${at}.content`, 'a piece ends past the file size');
      return { ...base, content };
    }
    case 'dir':
      return {
        name,
        type: 'dir',
        mode: checkMode(raw.mode, `${at}.mode`, refuse),
        ...checkOwnership(raw, at, refuse),
        tree: checkBlobId(raw.tree, `${at}.tree`, refuse),
      };
    case 'symlink': {
      const target = checkRawName(raw.target, `${at}.target`, refuse);
      const bytes = rawNameBytes(target);
      if (bytes.length === 0 || bytes.includes(0)) refuse(`${at}.target`, 'empty or contains a NUL byte');
      return { name, type: 'symlink', ...checkOwnership(raw, at, refuse), target };
    }
    case 'hardlink': {
      if (!Array.isArray(raw.linkTo) || raw.linkTo.length === 0)
        return refuse(`${at}.linkTo`, 'must be a non-empty array of names');
      const linkTo = raw.linkTo.map((n, i) => checkEntryName(n, `${at}.linkTo[${i}]`, refuse));
      return { name, type: 'hardlink', linkTo };
    }
    default:
      return refuse(`${at}.type`, `unknown entry type ${JSON.stringify(raw.type)}`);
  }
}

/**
 * Parses and checks a file-tree blob (a tree page or a content list). `blobId` names it in
 * errors; every problem is a HostileFileTree naming the field.
 */
export function parseFileTreeBlob(bytes: Uint8Array, blobId = 'blob'): FileTreeBlob {
  const refuse: Refuse = (where, reason) => {
    throw new HostileFileTree(`${blobId}: ${where}`, reason);
  };
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return refuse('', 'not a JSON file-tree blob');
  }
  if (!isRecord(raw)) return refuse('', 'not a JSON object');
  if (raw.version !== FILE_TREE_VERSION)
    refuse('version', `unsupported version ${JSON.stringify(raw.version)}`);
  if (raw.format === CONTENT_LIST_FORMAT) {
    return {
      format: CONTENT_LIST_FORMAT,
      version: FILE_TREE_VERSION,
      pieces: checkPieces(raw.pieces, 'pieces', refuse),
    };
  }
  if (raw.format !== TREE_FORMAT) return refuse('format', `unknown format ${JSON.stringify(raw.format)}`);
  if (!Array.isArray(raw.entries)) return refuse('entries', 'must be an array');
  const entries = raw.entries.map((e, i) => checkEntry(e, `entries[${i}]`, refuse));
  for (let i = 1; i < entries.length; i++) {
    if (compareRawNames((entries[i - 1] as FileTreeEntry).name, (entries[i] as FileTreeEntry).name) >= 0)
      refuse(`entries[${i}].name`, 'names must be unique and in byte order');
  }
  let directory: DirectoryAttributes | undefined;
  if (raw.directory !== undefined) {
    if (!isRecord(raw.directory)) return refuse('directory', 'must be an object');
    directory = {
      mode: checkMode(raw.directory.mode, 'directory.mode', refuse),
      ...checkOwnership(raw.directory, 'directory', refuse),
    };
  }
  let more: BlobId[] | undefined;
  if (raw.more !== undefined) {
    if (!Array.isArray(raw.more)) return refuse('more', 'must be an array of blob ids');
    more = raw.more.map((id, i) => checkBlobId(id, `more[${i}]`, refuse));
  }
  return {
    format: TREE_FORMAT,
    version: FILE_TREE_VERSION,
    ...(directory ? { directory } : {}),
    entries,
    ...(more ? { more } : {}),
  };
}

export interface FileTreeChildren {
  /** Blobs of this same format (subdirectories, further pages, content lists): expand each again. */
  readonly nested: readonly BlobId[];
  /** File content chunks: referenced, never parsed. */
  readonly data: readonly BlobId[];
}

/**
 * Every blob a file-tree blob references, for garbage collection's mark phase: start from a file
 * manifest's `root`, read each `nested` blob and call this again; `data` blobs are leaves.
 */
export function fileTreeChildren(blob: Uint8Array): FileTreeChildren {
  const parsed = parseFileTreeBlob(blob);
  if (parsed.format === CONTENT_LIST_FORMAT) return { nested: [], data: parsed.pieces.map((p) => p[2]) };
  const nested: BlobId[] = [...(parsed.more ?? [])];
  const data: BlobId[] = [];
  for (const entry of parsed.entries) {
    if (entry.type === 'dir') nested.push(entry.tree);
    else if (entry.type === 'file') {
      nested.push(...(entry.contentLists ?? []));
      for (const piece of entry.content ?? []) data.push(piece[2]);
    }
  }
  return { nested, data };
}
