import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../cli/main.js';
import { LocalDirectoryStore } from '../../../shared/adapters/local-directory-store.js';
import { backupKeys } from '../../../shared/domain/storage/keys.js';

/** The claim of a run that renewed it just now: a backup in progress. */
const liveClaim = (): string => {
  const now = new Date().toISOString();
  return JSON.stringify({ runId: 'run-1', startedAt: now, heartbeatAt: now, leaseSeconds: 3600 });
};

describe('lifeboat backup delete --local', () => {
  let out: string[];
  let err: string[];
  let dir: string;
  beforeEach(async () => {
    out = [];
    err = [];
    dir = await mkdtemp(join(tmpdir(), 'lifeboat-cli-delete-'));
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => out.push(String(chunk)) > 0);
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => err.push(String(chunk)) > 0);
    vi.stubEnv('AWS_REGION', '');
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
  });
  const run = (...args: string[]) =>
    main([
      'backup',
      'delete',
      ...args,
      '--local',
      '--dir',
      dir,
      '--repository-key-file',
      join(dir, '..', 'k'),
    ]);

  it('asks for --confirm before deleting anything', async () => {
    const store = new LocalDirectoryStore(dir);
    await store.put(backupKeys('nightly').metadata, '{}');
    expect(await run('nightly')).toBe(2);
    expect(err.join('')).toContain(
      'deleting backup "nightly" removes its snapshots and its data in the repository: add --confirm',
    );
    expect(await store.exists(backupKeys('nightly').metadata)).toBe(true);
  });

  it('refuses a repack threshold outside (0, 1] before deleting anything', async () => {
    const store = new LocalDirectoryStore(dir);
    await store.put(backupKeys('nightly').metadata, '{}');
    for (const bad of ['0', '1.5', 'half']) {
      expect(await run('nightly', '--confirm', '--repack-dead-fraction', bad)).toBe(2);
      expect(err.join('')).toContain(
        `--repack-dead-fraction must be a fraction in (0, 1] (1 turns repacking off), not "${bad}"`,
      );
    }
    expect(await store.exists(backupKeys('nightly').metadata)).toBe(true);
    expect(await run('nightly', '--confirm', '--repack-dead-fraction', '0.75')).toBe(0);
    expect(await store.exists(backupKeys('nightly').metadata)).toBe(false);
  });

  it('deletes a backup with no volumes and reports what it deleted; a second run finds nothing', async () => {
    const store = new LocalDirectoryStore(dir);
    await store.put(backupKeys('nightly').metadata, '{}');
    await store.put(backupKeys('nightly').contents, 'tar');
    await store.put(backupKeys('nightly').claim, liveClaim());
    expect(await run('nightly', '--confirm')).toBe(0);
    expect(out.join('')).toBe('Backup "nightly": deleted: 0 snapshots, 0 repository manifests, 2 objects.\n');
    expect(await store.list('backups/')).toEqual([]);
    expect(await run('nightly', '--confirm')).toBe(1);
    expect(err.join('')).toContain('backup "nightly" not found');
  });

  it('refuses a backup still in progress with a clean error, deleting nothing', async () => {
    const store = new LocalDirectoryStore(dir);
    await store.put(backupKeys('nightly').contents, 'tar');
    await store.put(backupKeys('nightly').claim, liveClaim());
    expect(await run('nightly', '--confirm')).toBe(1);
    expect(err.join('')).toBe('lifeboat: backup nightly is still in progress\n');
    expect(await store.exists(backupKeys('nightly').contents)).toBe(true);
    expect(await store.exists(backupKeys('nightly').claim)).toBe(true);
  });
});
