/**
 * Reads a backup tarball (Lifeboat's or Velero's, format 1.x) as a stream, entry by entry, with
 * memory bounded by the largest entry, never the archive. Refuses hostile archives before a
 * restore creates anything: links and special files, absolute or climbing paths, two entries for
 * one path, entries over the size limit, more decompressed bytes than allowed (gzip bombs),
 * malformed JSON, and any archive whose reading is more work than a PlanRestore step can do
 * within its timeout (ARCHIVE_WORK_BUDGET): a clear refusal, never a step that times out.
 * Entries outside `resources/` (Velero writes none but `metadata/version`) are skipped unread and
 * bounded apart, so gigabytes of them are refused at their headers, not inflated first.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type ExtractEvents, extract, type Extract as TarExtract } from 'tar-stream';
import { HostileArchive } from '../domain/errors.js';
import {
  type ArchiveEntry,
  entryPath,
  hostileName,
  parseEntryName,
} from '../domain/storage/archive-entry.js';
import { boundedGunzip, countedInput } from './bounded-gunzip.js';

export interface ArchiveLimits {
  /** Largest single entry. */
  readonly maxEntryBytes: number;
  /** Most decompressed bytes in all: the budget of one PlanRestore step (ARCHIVE_WORK_BUDGET). */
  readonly maxTotalBytes: number;
  /** Most entries in all (each is parsed and planned): the same budget. */
  readonly maxEntries: number;
  /** Most bytes in entries outside `resources/`, which a restore never reads. */
  readonly maxOtherBytes: number;
  /** Highest decompressed:compressed ratio once past `ratioCheckAfterBytes`. */
  readonly maxRatio: number;
  readonly ratioCheckAfterBytes: number;
}

/**
 * What one PlanRestore step (15 minutes, 1769 MB: one vCPU) reads and plans with room to spare.
 * test/bench/plan-restore-budget.ts, on this project's shared 2-core machine: Lifeboat-written
 * ConfigMaps (2 entries of about 1 KiB per item) plan at 24,000-30,000 entries and 47-58 MiB of
 * tar a second, one CPU busy; the budget, 2 million entries (a million items with their copies)
 * or 4 GiB, takes under a tenth of the step at that rate (the bench prints the share), so an
 * archive fits one step with time to spare on a vCPU several times slower, or is refused at
 * once. Within it the reader holds the paths it has seen (some 150 bytes each).
 */
export const ARCHIVE_WORK_BUDGET = {
  maxTotalBytes: 4 * 1024 * 1024 * 1024,
  maxEntries: 2_000_000,
} as const;

export const DEFAULT_LIMITS: ArchiveLimits = {
  maxEntryBytes: 32 * 1024 * 1024,
  ...ARCHIVE_WORK_BUDGET,
  maxOtherBytes: 16 * 1024 * 1024,
  maxRatio: 1000,
  ratioCheckAfterBytes: 64 * 1024 * 1024,
};

/** `metadata/version` holds `1.1.0` and a newline. */
const MAX_VERSION_BYTES = 64;

export type ArchiveItem = Extract<ArchiveEntry, { kind: 'item' }> & {
  readonly object: Record<string, unknown>;
};

/** One entry of the tar stream, its header and body. */
type TarEntry = ExtractEvents['entry'][1];

export interface ArchiveSummary {
  readonly formatVersion: string | undefined;
  readonly items: number;
  readonly ignored: readonly string[];
}

export async function readBackupArchive(options: {
  body: AsyncIterable<Uint8Array>;
  onItem: (item: ArchiveItem) => Promise<void>;
  limits?: Partial<ArchiveLimits>;
}): Promise<ArchiveSummary> {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const progress: ReadProgress = { compressed: 0, decompressed: 0, current: '(gzip stream)' };
  const gunzip = boundedGunzip({
    limits: { ...limits, maxBytes: limits.maxTotalBytes },
    count: progress,
    refusal: (reason) =>
      new HostileArchive(
        progress.current,
        reason.startsWith('more than')
          ? `${reason}: more than one PlanRestore step can read in its time`
          : reason,
      ),
  });
  const tar = extract();
  const reading = pipeline(Readable.from(countedInput(options.body, progress)), gunzip, tar);
  const consuming = consumedEntries({ tar, limits, progress, onItem: options.onItem });
  try {
    const [, summary] = await Promise.all([reading, consuming]);
    return summary;
  } catch (error) {
    tar.destroy();
    gunzip.destroy();
    // The read is over: the other half's failure (a stream torn down) says nothing more.
    reading.catch(() => undefined);
    consuming.catch(() => undefined);
    if (error instanceof HostileArchive) throw error;
    throw new HostileArchive(
      progress.current,
      `unreadable archive (${error instanceof Error ? error.message : String(error)})`,
    );
  }
}

/** How far the read has come: bytes in and out of gzip, and the entry being read (for errors). */
interface ReadProgress {
  compressed: number;
  decompressed: number;
  current: string;
}

/** What the pass over the entries has seen so far. */
interface EntryTally {
  formatVersion: string | undefined;
  items: number;
  entries: number;
  otherBytes: number;
  readonly ignored: string[];
  /** Every path read, to refuse a second entry for one (which one would win is anyone's guess). */
  readonly paths: Set<string>;
}

/** Reads every entry in order: the format version checked, items handed on, other files noted. */
async function consumedEntries(options: {
  tar: TarExtract;
  limits: ArchiveLimits;
  progress: ReadProgress;
  onItem: (item: ArchiveItem) => Promise<void>;
}): Promise<ArchiveSummary> {
  const tally: EntryTally = {
    formatVersion: undefined,
    items: 0,
    entries: 0,
    otherBytes: 0,
    ignored: [],
    paths: new Set(),
  };
  for await (const entry of options.tar) {
    options.progress.current = entry.header.name;
    const item = await readEntry({ entry, limits: options.limits, tally });
    if (item) await options.onItem(item);
  }
  return { formatVersion: tally.formatVersion, items: tally.items, ignored: tally.ignored };
}

/** One entry: checked, counted and read (or skipped unread); an item is returned. */
async function readEntry(options: {
  entry: TarEntry;
  limits: ArchiveLimits;
  tally: EntryTally;
}): Promise<ArchiveItem | undefined> {
  const { entry, limits, tally } = options;
  const { name } = entry.header;
  if (!isRegularFile(entry)) {
    entry.resume();
    return undefined;
  }
  if (++tally.entries > limits.maxEntries)
    throw new HostileArchive(
      name,
      `more than ${limits.maxEntries} entries: more than one PlanRestore step can plan in its time`,
    );
  const path = entryPath(name);
  if (tally.paths.has(path)) throw new HostileArchive(name, 'a second entry for the same path');
  tally.paths.add(path);
  const parsed = parseEntryName(name);
  const size = entry.header.size ?? 0;
  if (parsed.kind === 'other') {
    skipOther({ name, size, limits, tally });
    entry.resume();
    return undefined;
  }
  const maxBytes = parsed.kind === 'version' ? MAX_VERSION_BYTES : limits.maxEntryBytes;
  if (size > maxBytes)
    throw new HostileArchive(name, `an entry of ${size} bytes, over the ${maxBytes}-byte limit`);
  const text = await bodyText(entry, maxBytes);
  if (parsed.kind === 'version') {
    tally.formatVersion = text.trim();
    if (!/^1\.\d+\.\d+$/.test(tally.formatVersion))
      throw new HostileArchive(
        name,
        `unsupported backup format version "${tally.formatVersion.slice(0, 20)}"`,
      );
    return undefined;
  }
  tally.items++;
  return { ...parsed, object: itemObject(name, text) };
}

/** Whether the entry is a regular file; a directory is skipped; anything else (links, devices) is hostile. */
function isRegularFile(entry: TarEntry): boolean {
  const { name, type } = entry.header;
  const hostile = hostileName(name);
  if (hostile) throw new HostileArchive(name, hostile);
  if (type === 'directory') return false;
  if (type !== 'file' && type !== 'contiguous-file')
    throw new HostileArchive(name, `a ${type ?? 'special'} entry, not a regular file`);
  return true;
}

/** An entry outside `resources/`: noted, its size counted against the limit before it is read. */
function skipOther(options: { name: string; size: number; limits: ArchiveLimits; tally: EntryTally }): void {
  const { name, size, limits, tally } = options;
  tally.otherBytes += size;
  if (tally.otherBytes > limits.maxOtherBytes)
    throw new HostileArchive(
      name,
      `more than ${limits.maxOtherBytes} bytes in entries outside resources/, which a backup does not hold`,
    );
  if (tally.ignored.length < 100) tally.ignored.push(name);
}

/** An entry's body as text, never more than `maxBytes` (a header may understate what follows). */
async function bodyText(entry: TarEntry, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of entry) {
    length += (chunk as Buffer).length;
    if (length > maxBytes)
      throw new HostileArchive(entry.header.name, `an entry of more than ${maxBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** An item entry's JSON object. */
function itemObject(name: string, text: string): Record<string, unknown> {
  let object: unknown;
  try {
    object = JSON.parse(text);
  } catch {
    throw new HostileArchive(name, 'malformed JSON');
  }
  if (!object || typeof object !== 'object' || Array.isArray(object))
    throw new HostileArchive(name, 'not a JSON object');
  return object as Record<string, unknown>;
}
