/**
 * `lifeboat backup get|describe` and `restore describe` on files that are not what they should
 * be: a gzip bomb as a resource list (run as the command runs, with its 384 MiB heap), and
 * velero-backup.json documents that are not JSON, have `status: null` or no phase. Each is a
 * message naming the backup and the file, never a stack trace or a parser's words.
 */
import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../cli/main.js';
import { LocalDirectoryStore } from '../../../shared/adapters/local-directory-store.js';
import { backupKeys, restoreKeys } from '../../../shared/domain/storage/keys.js';

const MiB = 1024 * 1024;
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

const backupDocument = (name: string, status: unknown = { phase: 'Completed' }) =>
  JSON.stringify({ apiVersion: 'velero.io/v1', kind: 'Backup', metadata: { name }, spec: {}, status });

/** `mib` MiB of spaces inside a JSON object, as 1 MiB gzip members: about a thousandth of the size. */
function spacesBomb(mib: number): Buffer {
  const member = gzipSync(Buffer.alloc(MiB, 0x20), { level: 9 });
  return Buffer.concat([
    gzipSync('{"v1/ConfigMap": ['),
    ...Array.from({ length: mib }, () => member),
    gzipSync(']}'),
  ]);
}

describe('backup describe --details on a resource list that inflates to 3 GB', () => {
  it('ends with a message naming the file, within the command’s heap', async () => {
    // Prepare
    const dir = await mkdtemp(join(tmpdir(), 'lifeboat-cli-bomb-'));
    const store = new LocalDirectoryStore(dir);
    await store.put(backupKeys('bombed').metadata, backupDocument('bombed'));
    const bomb = spacesBomb(3 * 1024);
    expect(bomb.length).toBeLessThan(4 * MiB);
    await store.put(backupKeys('bombed').resourceList, bomb);

    // Act: as the command runs, heap capped as cli/bin/lifeboat.ts caps it.
    const run = promisify(execFile)(
      process.execPath,
      [
        '--max-old-space-size=384',
        join(root, 'cli/bin/lifeboat-tsx.mjs'),
        'backup',
        'describe',
        'bombed',
        '--details',
        '--local',
        '--dir',
        dir,
      ],
      { cwd: root, env: { ...process.env, AWS_REGION: '' } },
    );
    const outcome = await run.then(
      () => ({ code: 0, stderr: '' }),
      (error: { code?: number; stderr?: string }) => ({ code: error.code, stderr: error.stderr ?? '' }),
    );

    // Assess
    expect(outcome).toEqual({
      code: 1,
      stderr:
        'lifeboat: the resource list of backup "bombed" (backups/bombed/bombed-resource-list.json.gz) is refused: more than 67108864 bytes once decompressed\n',
    });
  }, 60_000);
});

describe('backup get and describe on a velero-backup.json that is not a Backup', () => {
  let out: string[];
  let err: string[];
  let dir: string;
  let store: LocalDirectoryStore;
  beforeEach(async () => {
    out = [];
    err = [];
    dir = await mkdtemp(join(tmpdir(), 'lifeboat-cli-documents-'));
    store = new LocalDirectoryStore(dir);
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => out.push(String(chunk)) > 0);
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => err.push(String(chunk)) > 0);
    vi.stubEnv('AWS_REGION', '');
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
  });
  const at = 'the velero-backup.json of backup "broken" (backups/broken/velero-backup.json)';

  it.each([
    ['text that is not JSON', '{not json', 'is not JSON'],
    [
      'status: null',
      backupDocument('broken', null),
      "is not a velero.io/v1 Backup: status: must be an object: the backup's status, with its phase",
    ],
    [
      'no phase',
      backupDocument('broken', { expiration: '2026-02-01T00:00:00Z' }),
      'is not a velero.io/v1 Backup: status.phase: is missing: a backup says its phase',
    ],
  ])('describe names the backup and the file for %s', async (_, text, reason) => {
    await store.put(backupKeys('broken').metadata, text);
    expect(await main(['backup', 'describe', 'broken', '--local', '--dir', dir])).toBe(1);
    expect(err.join('')).toBe(`lifeboat: ${at} ${reason}\n`);
  });

  it('get lists the backups it can read and names the one it cannot', async () => {
    // Prepare
    await store.put(backupKeys('good').metadata, backupDocument('good'));
    await store.put(backupKeys('broken').metadata, backupDocument('broken', null));

    // Act
    const code = await main(['backup', 'get', '--local', '--dir', dir]);

    // Assess
    expect(code).toBe(0);
    expect(out.join('')).toMatch(/^NAME +STATUS[^\n]*\ngood +Completed/);
    expect(err.join('')).toBe(
      `lifeboat: skipped: ${at} is not a velero.io/v1 Backup: status: must be an object: the backup's status, with its phase\n`,
    );
  });

  it('get of the one it cannot read says why', async () => {
    await store.put(backupKeys('broken').metadata, '{not json');
    expect(await main(['backup', 'get', 'broken', '--local', '--dir', dir])).toBe(1);
    expect(err.join('')).toBe(`lifeboat: ${at} is not JSON\n`);
  });

  it('restore describe names the restore and the file of a record that is not one', async () => {
    await store.put(
      restoreKeys('r1').status,
      JSON.stringify({ apiVersion: 'velero.io/v1', kind: 'Restore', spec: {}, status: null }),
    );
    expect(await main(['restore', 'describe', 'r1', '--local', '--dir', dir])).toBe(1);
    expect(err.join('')).toBe(
      'lifeboat: the record of restore "r1" (plugins/lifeboat/restores/r1.json) is not a velero.io/v1 Restore: spec.backupName: is missing: the backup restored\n',
    );
  });
});
