import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import {
  readBackupDocument,
  readStoredJson,
  readStoredText,
  storedLines,
} from '../../../../shared/adapters/stored-file-reader.js';
import { StoredFileUnreadable } from '../../../../shared/domain/errors.js';
import { backupKeys } from '../../../../shared/domain/storage/keys.js';
import { backupFile, type StoredFile } from '../../../../shared/domain/storage/stored-files.js';
import type { ObjectStore } from '../../../../shared/ports/object-store.js';

const MiB = 1024 * 1024;

/**
 * `bytes` of spaces (valid JSON whitespace) as concatenated gzip members of 1 MiB each: about a
 * thousandth of the size, built without deflating it all.
 */
function spacesBomb(options: { mib: number; before?: string; after?: string }): Buffer {
  const member = gzipSync(Buffer.alloc(MiB, 0x20), { level: 9 });
  return Buffer.concat([
    gzipSync(options.before ?? '['),
    ...Array.from({ length: options.mib }, () => member),
    gzipSync(options.after ?? ']'),
  ]);
}

const file = (limits: Partial<StoredFile['limits']> = {}): StoredFile => {
  const base = backupFile('nightly', 'volumeInfo');
  return { ...base, limits: { ...base.limits, ...limits } };
};

async function refusal(read: Promise<unknown>): Promise<StoredFileUnreadable> {
  const error = await read.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StoredFileUnreadable);
  return error as StoredFileUnreadable;
}

describe('reading a backup’s gzip’d files within their limits', () => {
  let store: LocalDirectoryStore;
  beforeEach(async () => {
    store = new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'lifeboat-stored-files-')));
  });

  it('reads a file within its limits, and nothing when there is none', async () => {
    await store.put(backupKeys('nightly').volumeInfo, gzipSync(JSON.stringify([{ pvName: 'pv-1' }])));
    const schema = z.array(z.object({ pvName: z.string() }));
    expect(await readStoredJson(store, file(), { schema, shape: 'a list' })).toEqual([{ pvName: 'pv-1' }]);
    expect(
      await readStoredJson(store, backupFile('other', 'volumeInfo'), { schema, shape: 'a list' }),
    ).toBeUndefined();
  });

  it('refuses a 3 MB file that inflates to 3 GB after at most its limit, naming the file', async () => {
    // Prepare
    const bomb = spacesBomb({ mib: 3 * 1024 });
    expect(bomb.length).toBeLessThan(4 * MiB);
    await store.put(backupKeys('nightly').volumeInfo, bomb);

    // Act
    const error = await refusal(readStoredJson(store, file(), { schema: z.unknown(), shape: 'a list' }));

    // Assess: refused at the 32 MiB limit of the file, not at 3 GB.
    expect(error.message).toBe(
      'the volume info of backup "nightly" (backups/nightly/nightly-volumeinfo.json.gz) is refused: more than 33554432 bytes once decompressed',
    );
  });

  it('refuses a file that decompresses more than its ratio allows before its size limit', async () => {
    await store.put(backupKeys('nightly').volumeInfo, spacesBomb({ mib: 8 }));
    const error = await refusal(readStoredText(store, file({ maxRatio: 100, ratioCheckAfterBytes: MiB })));
    expect(error.message).toMatch(/is refused: decompresses more than 100 times its size \(a gzip bomb\)$/);
  });

  it.each([
    ['bytes that are not gzip', Buffer.from('{"plain": "json"}'), 'is not gzip, or is cut short'],
    [
      'a gzip stream cut short',
      gzipSync(JSON.stringify([1, 2, 3])).subarray(0, 12),
      'is not gzip, or is cut short',
    ],
    ['gzip of something that is not JSON', gzipSync('[{"pvName": '), 'is not JSON'],
    [
      'JSON of another shape',
      gzipSync('{"pvName": "x"}'),
      'is not a list: Invalid input: expected array, received object',
    ],
  ])('refuses %s, naming the file and never quoting a parser', async (_, body, reason) => {
    await store.put(backupKeys('nightly').volumeInfo, body);
    const error = await refusal(
      readStoredJson(store, file(), { schema: z.array(z.unknown()), shape: 'a list' }),
    );
    expect(error.message).toBe(
      `the volume info of backup "nightly" (backups/nightly/nightly-volumeinfo.json.gz) ${reason}`,
    );
    expect(error.message).not.toMatch(/SyntaxError|TypeError|position|Unexpected/);
  });

  it('passes on a failure of the store itself, which may be retried, as it is', async () => {
    const failing: ObjectStore = Object.assign(Object.create(store) as ObjectStore, {
      getStream: async () =>
        (async function* () {
          yield gzipSync('[1,').subarray(0, 10);
          throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
        })(),
    });
    await expect(readStoredText(failing, file())).rejects.toThrow('socket hang up');
  });
});

describe('reading velero-backup.json', () => {
  let store: LocalDirectoryStore;
  beforeEach(async () => {
    store = new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'lifeboat-stored-files-')));
  });
  const document = (status: unknown) =>
    JSON.stringify({
      apiVersion: 'velero.io/v1',
      kind: 'Backup',
      metadata: { name: 'nightly' },
      spec: {},
      status,
    });
  const at = 'the velero-backup.json of backup "nightly" (backups/nightly/velero-backup.json)';

  it('reads a document Velero wrote, keeping what it does not know and filling what it leaves out', async () => {
    await store.put(
      backupKeys('nightly').metadata,
      document({ phase: 'Completed', expiration: '2026-02-01T00:00:00Z', queuePosition: 3 }),
    );
    const read = await readBackupDocument(store, 'nightly');
    expect(read?.status).toEqual({
      phase: 'Completed',
      expiration: '2026-02-01T00:00:00Z',
      queuePosition: 3,
      version: 1,
      formatVersion: '',
      startTimestamp: '',
    });
    expect(read?.metadata).toEqual({ name: 'nightly', namespace: 'velero', creationTimestamp: '' });
  });

  it.each([
    ['text that is not JSON', 'this is not json', 'is not JSON'],
    ['a JSON list', '[1, 2]', 'is not a velero.io/v1 Backup: Invalid input: expected object, received array'],
    [
      'status: null',
      document(null),
      "is not a velero.io/v1 Backup: status: must be an object: the backup's status, with its phase",
    ],
    [
      'no status',
      document(undefined),
      "is not a velero.io/v1 Backup: status: is missing: the backup's status, with its phase",
    ],
    [
      'a status without phase',
      document({ expiration: 'x' }),
      'is not a velero.io/v1 Backup: status.phase: is missing: a backup says its phase',
    ],
    [
      'an unknown phase',
      document({ phase: 'Exploded' }),
      'is not a velero.io/v1 Backup: status.phase: must be one of',
    ],
    [
      'errors that are no count',
      document({ phase: 'Completed', errors: 'many' }),
      'is not a velero.io/v1 Backup: status.errors:',
    ],
    [
      'validation errors that are no list',
      document({ phase: 'FailedValidation', validationErrors: 'bad' }),
      'is not a velero.io/v1 Backup: status.validationErrors:',
    ],
    [
      'another kind',
      JSON.stringify({
        apiVersion: 'velero.io/v1',
        kind: 'Restore',
        metadata: { name: 'n' },
        status: { phase: 'Completed' },
      }),
      'is not a velero.io/v1 Backup: kind: must be Backup',
    ],
    [
      '3 MB of it',
      `${document({ phase: 'Completed' })}${' '.repeat(3 * MiB)}`,
      'is refused: more than 2097152 bytes',
    ],
  ])('refuses %s, naming the backup and the file', async (_, text, reason) => {
    await store.put(backupKeys('nightly').metadata, text);
    const error = await refusal(readBackupDocument(store, 'nightly'));
    expect(error.message.startsWith(`${at} ${reason}`)).toBe(true);
    expect(error.message).not.toMatch(/SyntaxError|TypeError|reading '|undefined/);
  });
});

describe('reading a log line by line', () => {
  let store: LocalDirectoryStore;
  beforeEach(async () => {
    store = new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'lifeboat-stored-files-')));
  });
  const lines = async (f: StoredFile): Promise<string[]> => {
    const out: string[] = [];
    for await (const line of storedLines(store, f)) out.push(line);
    return out;
  };

  it('yields each line, characters split between gzip members included', async () => {
    const text = 'first\nsecond: é\nthird';
    const bytes = Buffer.from(text);
    const split = bytes.indexOf(0xa9);
    await store.put(
      backupKeys('nightly').logs,
      Buffer.concat([gzipSync(bytes.subarray(0, split)), gzipSync(bytes.subarray(split))]),
    );
    expect(await lines(backupFile('nightly', 'logs'))).toEqual(['first', 'second: é', 'third']);
  });

  it('refuses a line longer than a line may be, holding no more than it', async () => {
    await store.put(backupKeys('nightly').logs, spacesBomb({ mib: 3, before: 'start', after: '\n' }));
    const error = await refusal(lines(backupFile('nightly', 'logs')));
    expect(error.message).toBe(
      'the logs of backup "nightly" (backups/nightly/nightly-logs.gz) is refused: a line of more than 1048576 bytes',
    );
  });

  it('refuses a log past its limit as it streams', async () => {
    const many = Buffer.from('a line of the log\n'.repeat(4096));
    await store.put(
      backupKeys('nightly').logs,
      gzipSync(Buffer.concat(Array.from({ length: 64 }, () => many))),
    );
    const error = await refusal(
      lines({
        ...backupFile('nightly', 'logs'),
        limits: { maxBytes: MiB, maxRatio: 1000, ratioCheckAfterBytes: MiB },
      }),
    );
    expect(error.message).toMatch(/is refused: more than 1048576 bytes once decompressed$/);
  });
});
