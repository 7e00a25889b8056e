/**
 * The one reader of a backup's and a restore's files (shared/domain/storage/stored-files.ts):
 * `velero-backup.json`, the resource list, results, volume info, item operations, volume
 * snapshots, logs. Each is streamed from the store through a bounded gunzip (or a byte count),
 * so a file is refused past its limits having inflated at most a little more than them; JSON is
 * parsed and checked against its schema only within them. Every refusal is StoredFileUnreadable,
 * naming the file and why, never a SyntaxError, a TypeError or the file's content.
 */
import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { z } from 'zod';
import { STORED_BACKUP_SHAPE, storedBackupDocument } from '../contracts/backup-files.js';
import { problemsOf } from '../contracts/kubernetes.js';
import { StoredFileUnreadable } from '../domain/errors.js';
import type { BackupDocument } from '../domain/storage/backup-document.js';
import { backupFile, LOG_LINE_MAX_BYTES, type StoredFile } from '../domain/storage/stored-files.js';
import type { ObjectStore } from '../ports/object-store.js';
import { boundedGunzip, countedInput, type InflationCount } from './bounded-gunzip.js';

const signalOf = (signal?: AbortSignal): { signal?: AbortSignal } => (signal ? { signal } : {});

/** The file's bytes (inflated), streamed within its limits; undefined when there is no such file. */
async function* boundedBytes(
  store: ObjectStore,
  file: StoredFile,
  signal?: AbortSignal,
): AsyncGenerator<Buffer, boolean> {
  const body = await store.getStream(file.key, signalOf(signal));
  if (!body) return false;
  const count: InflationCount = { compressed: 0, decompressed: 0 };
  const refusal = (reason: string) => new StoredFileUnreadable(file, `is refused: ${reason}`);
  if (!file.gzipped) {
    for await (const chunk of body) {
      count.decompressed += chunk.length;
      if (count.decompressed > file.limits.maxBytes) throw refusal(`more than ${file.limits.maxBytes} bytes`);
      yield Buffer.from(chunk);
    }
    return true;
  }
  const gunzip = boundedGunzip({ limits: file.limits, count, refusal });
  const source = Readable.from(countedInput(body, count));
  source.on('error', (error) => gunzip.destroy(error));
  source.pipe(gunzip);
  try {
    for await (const chunk of gunzip) yield chunk as Buffer;
  } catch (error) {
    // zlib's own errors (Z_DATA_ERROR, Z_BUF_ERROR): the bytes are no gzip; anything else (the
    // store's stream failing) is what it is, and may be retried.
    const code = (error as { code?: unknown } | undefined)?.code;
    if (typeof code === 'string' && code.startsWith('Z_'))
      throw new StoredFileUnreadable(file, 'is not gzip, or is cut short', { cause: error });
    throw error;
  } finally {
    source.destroy();
    gunzip.destroy();
  }
  return true;
}

/** The whole file as text, within its limits; undefined when there is no such file. */
export async function readStoredText(
  store: ObjectStore,
  file: StoredFile,
  options: { signal?: AbortSignal } = {},
): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  const bytes = boundedBytes(store, file, options.signal);
  let next = await bytes.next();
  while (!next.done) {
    chunks.push(next.value);
    next = await bytes.next();
  }
  return next.value ? Buffer.concat(chunks).toString('utf8') : undefined;
}

/**
 * The file as JSON of the schema's shape; undefined when there is no such file. A file that is
 * not JSON, or not of the shape, is refused with the first problem's field path.
 */
export async function readStoredJson<T>(
  store: ObjectStore,
  file: StoredFile,
  options: { schema: z.ZodType<T>; shape: string; signal?: AbortSignal },
): Promise<T | undefined> {
  const text = await readStoredText(store, file, options);
  if (text === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new StoredFileUnreadable(file, 'is not JSON');
  }
  const parsed = options.schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const [first] = problemsOf(parsed.error);
  const where = first && first.path !== '(request)' ? `${first.path}: ` : '';
  throw new StoredFileUnreadable(file, `is not ${options.shape}: ${where}${first?.message ?? 'invalid'}`);
}

/**
 * The file's lines, one at a time, for files read in full only by people (logs): memory holds
 * one line (at most LOG_LINE_MAX_BYTES), and the file is refused past its limits as it streams.
 */
export async function* storedLines(
  store: ObjectStore,
  file: StoredFile,
  options: { signal?: AbortSignal } = {},
): AsyncGenerator<string, boolean> {
  let pending = '';
  const decoder = new StringDecoder('utf8');
  const bytes = boundedBytes(store, file, options.signal);
  let next = await bytes.next();
  while (!next.done) {
    pending += decoder.write(next.value);
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    if (pending.length > LOG_LINE_MAX_BYTES)
      throw new StoredFileUnreadable(file, `is refused: a line of more than ${LOG_LINE_MAX_BYTES} bytes`);
    yield* lines;
    next = await bytes.next();
  }
  pending += decoder.end();
  if (pending) yield pending;
  return next.value;
}

/** A backup's `velero-backup.json`, checked; undefined when the backup has none (yet). */
export function readBackupDocument(
  store: ObjectStore,
  name: string,
  options: { signal?: AbortSignal } = {},
): Promise<BackupDocument | undefined> {
  return readStoredJson(store, backupFile(name, 'metadata'), {
    schema: storedBackupDocument,
    shape: STORED_BACKUP_SHAPE,
    ...options,
  });
}
