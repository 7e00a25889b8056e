/**
 * Reads a backup tarball (Lifeboat's or Velero's, format 1.x) as a stream, entry by entry, with
 * memory bounded by the largest entry, never the archive. Refuses hostile archives before a
 * restore creates anything: links and special files, absolute or climbing paths, entries over
 * the size limit, more decompressed bytes than allowed (gzip bombs), and malformed JSON.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract } from 'tar-stream';
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
  let compressed = 0;
  let decompressed = 0;
  let current = '(gzip stream)';
  const counted = async function* (): AsyncGenerator<Uint8Array> {
    for await (const chunk of options.body) {
      compressed += chunk.length;
      yield chunk;
    }
  };
  const gunzip = createGunzip();
  gunzip.on('data', (chunk: Buffer) => {
    decompressed += chunk.length;
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
  const tar = extract();
  let formatVersion: string | undefined;
  let items = 0;
  const ignored: string[] = [];
  const reading = pipeline(Readable.from(counted()), gunzip, tar);
  const consuming = (async () => {
    for await (const entry of tar) {
      const { name, type, size } = entry.header;
      current = name;
      const hostile = hostileName(name);
      if (hostile) throw new HostileArchive(name, hostile);
      if (type === 'directory') {
        entry.resume();
        continue;
      }
      if (type !== 'file' && type !== 'contiguous-file')
        throw new HostileArchive(name, `a ${type ?? 'special'} entry, not a regular file`);
      if ((size ?? 0) > limits.maxEntryBytes)
        throw new HostileArchive(
          name,
          `an entry of ${size} bytes, over the ${limits.maxEntryBytes}-byte limit`,
        );
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
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
      let object: unknown;
      try {
        object = JSON.parse(text);
      } catch {
        throw new HostileArchive(name, 'malformed JSON');
      }
      if (!object || typeof object !== 'object' || Array.isArray(object))
        throw new HostileArchive(name, 'not a JSON object');
      items++;
      await options.onItem({ ...parsed, object: object as Record<string, unknown> });
    }
  })();
  try {
    await Promise.all([reading, consuming]);
  } catch (error) {
    tar.destroy();
    gunzip.destroy();
    if (error instanceof HostileArchive) throw error;
    throw new HostileArchive(
      current,
      `unreadable archive (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  return { formatVersion, items, ignored };
}
