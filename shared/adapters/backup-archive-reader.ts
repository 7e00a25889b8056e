/**
 * Reads a backup tarball (Lifeboat's or Velero's, format 1.x) as a stream, entry by entry, with
 * memory bounded by the largest entry, never the archive. Refuses hostile archives before a
 * restore creates anything: links and special files, absolute or climbing paths, entries over
 * the size limit, more decompressed bytes than allowed (gzip bombs), and malformed JSON.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, type Gunzip } from 'node:zlib';
import { type ExtractEvents, extract, type Extract as TarExtract } from 'tar-stream';
import { HostileArchive } from '../domain/errors.js';
import { type ArchiveEntry, hostileName, parseEntryName } from '../domain/storage/archive-entry.js';

export interface ArchiveLimits {
  /** Largest single entry. */
  readonly maxEntryBytes: number;
  /** Most decompressed bytes in all. */
  readonly maxTotalBytes: number;
  /** Highest decompressed:compressed ratio once past `ratioCheckAfterBytes`. */
  readonly maxRatio: number;
  readonly ratioCheckAfterBytes: number;
}

export const DEFAULT_LIMITS: ArchiveLimits = {
  maxEntryBytes: 32 * 1024 * 1024,
  maxTotalBytes: 64 * 1024 * 1024 * 1024,
  maxRatio: 1000,
  ratioCheckAfterBytes: 64 * 1024 * 1024,
};

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
  const gunzip = boundedGunzip(limits, progress);
  const tar = extract();
  const reading = pipeline(Readable.from(countedBody(options.body, progress)), gunzip, tar);
  const consuming = consumedEntries({ tar, limits, progress, onItem: options.onItem });
  try {
    const [, summary] = await Promise.all([reading, consuming]);
    return summary;
  } catch (error) {
    tar.destroy();
    gunzip.destroy();
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

async function* countedBody(
  body: AsyncIterable<Uint8Array>,
  progress: ReadProgress,
): AsyncGenerator<Uint8Array> {
  for await (const chunk of body) {
    progress.compressed += chunk.length;
    yield chunk;
  }
}

/** A gunzip that fails the read once the archive decompresses past the total or the ratio limit. */
function boundedGunzip(limits: ArchiveLimits, progress: ReadProgress): Gunzip {
  const gunzip = createGunzip();
  gunzip.on('data', (chunk: Buffer) => {
    progress.decompressed += chunk.length;
    const { compressed, decompressed, current } = progress;
    if (decompressed > limits.maxTotalBytes) {
      gunzip.destroy(
        new HostileArchive(current, `more than ${limits.maxTotalBytes} bytes once decompressed`),
      );
    } else if (decompressed > limits.ratioCheckAfterBytes && decompressed > compressed * limits.maxRatio) {
      gunzip.destroy(
        new HostileArchive(current, `decompresses more than ${limits.maxRatio} times its size (a gzip bomb)`),
      );
    }
  });
  return gunzip;
}

/** Reads every entry in order: the format version checked, items handed on, other files noted. */
async function consumedEntries(options: {
  tar: TarExtract;
  limits: ArchiveLimits;
  progress: ReadProgress;
  onItem: (item: ArchiveItem) => Promise<void>;
}): Promise<ArchiveSummary> {
  let formatVersion: string | undefined;
  let items = 0;
  const ignored: string[] = [];
  for await (const entry of options.tar) {
    const { name } = entry.header;
    options.progress.current = name;
    const text = await regularFileText(entry, options.limits);
    if (text === undefined) continue;
    const parsed = parseEntryName(name);
    if (parsed.kind === 'version') {
      formatVersion = text.trim();
      if (!/^1\.\d+\.\d+$/.test(formatVersion))
        throw new HostileArchive(name, `unsupported backup format version "${formatVersion}"`);
      continue;
    }
    if (parsed.kind === 'other') {
      ignored.push(name);
      continue;
    }
    const object = itemObject(name, text);
    items++;
    await options.onItem({ ...parsed, object });
  }
  return { formatVersion, items, ignored };
}

/** The text of a regular file entry; undefined for a directory (skipped); any other entry is hostile. */
async function regularFileText(entry: TarEntry, limits: ArchiveLimits): Promise<string | undefined> {
  const { name, type, size } = entry.header;
  const hostile = hostileName(name);
  if (hostile) throw new HostileArchive(name, hostile);
  if (type === 'directory') {
    entry.resume();
    return undefined;
  }
  if (type !== 'file' && type !== 'contiguous-file')
    throw new HostileArchive(name, `a ${type ?? 'special'} entry, not a regular file`);
  if ((size ?? 0) > limits.maxEntryBytes)
    throw new HostileArchive(name, `an entry of ${size} bytes, over the ${limits.maxEntryBytes}-byte limit`);
  const chunks: Buffer[] = [];
  for await (const chunk of entry) chunks.push(chunk as Buffer);
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
