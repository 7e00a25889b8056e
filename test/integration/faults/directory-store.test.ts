/**
 * Fault scenarios of the directory store: a disk that fills up mid-backup (a real ENOSPC, on a
 * small tmpfs mounted for the test; the test environment runs as root, as CI does), and messages
 * delivered twice at once. Nothing already stored may be lost, no half-written file may stay,
 * and the name of a backup that could not finish must be reusable once it is deleted.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listBackups } from '../../../cli/local/backup-reader.js';
import { deleteBackup } from '../../../functions/delete-backup/delete-backup.js';
import { LocalDirectoryStore } from '../../../shared/adapters/local-directory-store.js';
import { parseItemBlockMessage } from '../../../shared/contracts/item-block-wire.js';
import { backupKeys } from '../../../shared/domain/storage/keys.js';
import { backup, backupRequest, tempStore } from '../backup/support.js';
import { readArchive } from '../support/archive.js';
import { kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import { seedNamespace, sleep } from './support.js';

const SMALL = { pageSize: 5, maxMessageBytes: 6_000 };

/** Every file under `dir`, as paths relative to it. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
}

describe('the directory store under faults', () => {
  let kc: KubeConfig;
  let spec: Record<string, unknown>;
  let mount: string;

  beforeAll(async () => {
    kc = kubeConfigFor(testEnv().clusters.source);
    const namespace = uniqueName('fault-dir');
    await seedNamespace(kc, { namespace, count: 60 });
    spec = { includedNamespaces: [namespace], includedResources: ['configmaps', 'secrets', 'namespaces'] };
    mount = await mkdtemp(join(tmpdir(), 'lifeboat-full-'));
    // A real file system that fills up: 2 MiB of tmpfs (needs root, as the environment has).
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m,mode=0700', 'tmpfs', mount]);
  });

  afterAll(async () => {
    if (!mount) return;
    execFileSync('umount', [mount]);
    await rm(mount, { recursive: true, force: true });
  });

  it('ENOSPC mid-backup: the run ends naming the full disk, earlier backups intact, no temporary file left; the name is reusable after delete', async () => {
    const store = new LocalDirectoryStore(join(mount, 'backups'));
    const earlier = uniqueName('earlier');
    expect(await backup({ kc, store, request: backupRequest(earlier, spec), extra: SMALL })).toMatchObject({
      ok: true,
      output: { phase: 'Completed' },
    });
    const earlierArchive = await readArchive(store, backupKeys(earlier).contents);
    // Leave about 40 KiB: the claim and the first results fit, the backup does not.
    const free = Number(execFileSync('df', ['--output=avail', '-B1', mount]).toString().split('\n')[1]);
    const filler = join(mount, 'filler');
    await writeFile(filler, Buffer.alloc(Math.max(0, free - 40 * 1024)));

    const name = uniqueName('full');
    const outcome = await backup({
      kc,
      store,
      request: backupRequest(name, spec),
      extra: { ...SMALL, claimLeaseSeconds: 1, maxReceiveCount: 2 },
    });
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.cause).toMatch(/ENOSPC|no space left on device/);
    expect((await filesUnder(mount)).filter((f) => f.includes('.tmp-'))).toEqual([]);
    expect(await readArchive(store, backupKeys(earlier).contents)).toEqual(earlierArchive);

    // Space is freed; once the dead run's lease ran out its backup is listed Failed, with why.
    await rm(filler);
    await sleep(1_500);
    const listed = (await listBackups(store)).documents.find((d) => d.metadata.name === name);
    expect(listed?.status).toMatchObject({
      phase: 'Failed',
      failureReason: expect.stringContaining('stopped renewing its claim'),
    });
    const again = await backup({ kc, store, request: backupRequest(name, spec), extra: SMALL });
    expect(again).toMatchObject({ ok: false, error: 'FailedValidation' });
    if (!again.ok) expect(again.cause).toContain(`a backup named "${name}" already exists`);
    expect(await deleteBackup({ name }, { store })).toMatchObject({ found: true, deleted: true });
    expect(await backup({ kc, store, request: backupRequest(name, spec), extra: SMALL })).toMatchObject({
      ok: true,
      output: { phase: 'Completed', errors: 0 },
    });
    expect((await readArchive(store, backupKeys(name).contents)).names).toEqual(
      earlierArchive.names.map((n) => n),
    );
  });

  it('SQS-style duplicates: a message delivered twice at once is backed up once', async () => {
    const clean = await tempStore();
    const cleanName = uniqueName('clean');
    expect(
      await backup({ kc, store: clean, request: backupRequest(cleanName, spec), extra: SMALL }),
    ).toMatchObject({
      ok: true,
    });
    const store = await tempStore();
    const name = uniqueName('twice');
    const doubled: string[] = [];
    const outcome = await backup({
      kc,
      store,
      request: backupRequest(name, spec),
      extra: {
        ...SMALL,
        // At-least-once delivery: every other message arrives twice, both copies at once.
        wrapWorker: (worker) => async (body) => {
          const id = parseItemBlockMessage(body).messageId;
          if (Number(id.slice(-1)) % 2 === 0) {
            doubled.push(id);
            await Promise.all([worker(body), worker(body)]);
          } else await worker(body);
        },
      },
    });
    expect(outcome).toMatchObject({ ok: true, output: { phase: 'Completed', errors: 0 } });
    expect(doubled.length).toBeGreaterThan(2);
    const a = await readArchive(clean, backupKeys(cleanName).contents);
    const b = await readArchive(store, backupKeys(name).contents);
    expect(b.names).toEqual(a.names);
    expect(new Set(b.names).size).toBe(b.names.length);
    expect(b.contents).toEqual(a.contents);
  });
});
