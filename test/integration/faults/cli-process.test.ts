/**
 * Fault scenario: the `lifeboat` process itself killed (SIGKILL) in the middle of a backup, then
 * the name looked at, refused, deleted and reused with the real command, as a person would.
 * The backup is held mid-run by pausing the apiserver behind a proxy, so the kill lands after the
 * name is claimed and before anything is finished.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backupKeys } from '../../../shared/domain/storage/keys.js';
import type { ClusterInfo } from '../../env/cluster.js';
import { FaultProxy } from '../../env/fault-proxy.js';
import { kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';
import { afterRequests, objectsIn, seedNamespace, sleep } from './support.js';

const LEASE_SECONDS = 2;
const environment = { ...process.env, LIFEBOAT_CLAIM_LEASE_SECONDS: String(LEASE_SECONDS) };

function start(args: readonly string[]): ChildProcess {
  return spawn(process.execPath, ['cli/bin/lifeboat-tsx.mjs', ...args], {
    env: environment,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Runs the command to its end: exit code and what it printed. */
async function lifeboat(args: readonly string[]): Promise<{ code: number | null; out: string; err: string }> {
  const child = start(args);
  let out = '';
  let err = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { code, out, err };
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
}

describe('the lifeboat process killed mid-backup', () => {
  let source: ClusterInfo;
  let kc: KubeConfig;
  let namespace: string;
  let proxy: FaultProxy;

  beforeAll(async () => {
    source = testEnv().clusters.source;
    kc = kubeConfigFor(source);
    namespace = uniqueName('fault-cli');
    await seedNamespace(kc, { namespace, count: 30 });
    proxy = await FaultProxy.forCluster(source);
  });

  afterAll(async () => {
    await proxy?.close();
  });

  it('leaves a name that get, describe and a new run recognise as a dead run’s, deletable, then reusable', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lifeboat-killed-'));
    const proxied = join(dir, '..', `${uniqueName('proxied')}.kubeconfig`);
    await writeFile(proxied, kc.exportConfig().split(source.server).join(proxy.url), { mode: 0o600 });
    const name = uniqueName('killed');
    const create = ['backup', 'create', name, '--include-namespaces', namespace, '--local', '--dir', dir];
    // The apiserver stops answering a few requests into the backup: the run hangs mid-way.
    const held = afterRequests(proxy, { after: 3, fault: () => proxy.pause() });
    const child = start([...create, '--kubeconfig', proxied]);
    const exited = new Promise((resolve) => child.on('exit', resolve));
    await waitFor(
      'the backup to hang on the paused apiserver',
      async () => held.fired && proxy.counts.held > 0,
    );
    expect(await filesUnder(dir)).toContain(backupKeys(name).claim);
    child.kill('SIGKILL');
    await exited;
    proxy.resume();

    // Once the lease has run out, every command sees a backup whose run died: Failed, and why.
    await sleep(LEASE_SECONDS * 1000 + 500);
    const listed = await lifeboat(['backup', 'get', '--local', '--dir', dir, '-o', 'json']);
    expect(listed.code).toBe(0);
    const documents = JSON.parse(listed.out) as {
      metadata: { name: string };
      status: Record<string, unknown>;
    }[];
    expect(documents.find((d) => d.metadata.name === name)?.status).toMatchObject({
      phase: 'Failed',
      failureReason: expect.stringMatching(/RunAbandoned: run local-.* stopped renewing its claim/),
    });
    const described = await lifeboat(['backup', 'describe', name, '--local', '--dir', dir]);
    expect(described.code).toBe(0);
    expect(described.out).toMatch(/Phase:\s+Failed/);

    const reused = await lifeboat([...create, '--kubeconfig', source.kubeconfig]);
    expect(reused.code).toBe(1);
    expect(reused.err).toContain(`a backup named "${name}" already exists`);

    const deleted = await lifeboat(['backup', 'delete', name, '--confirm', '--local', '--dir', dir]);
    expect(deleted.code).toBe(0);
    expect((await filesUnder(dir)).filter((f) => f.includes('.tmp-') || f.startsWith('backups/'))).toEqual(
      [],
    );

    const again = await lifeboat([...create, '--kubeconfig', source.kubeconfig]);
    expect(again.out).toContain(`Backup "${name}": Completed`);
    expect(again.code).toBe(0);
  });

  it('mid-restore: restore describe finds the restore recorded Failed, counting no more than the cluster holds', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lifeboat-killed-restore-'));
    const backupName = uniqueName('source');
    const made = await lifeboat([
      ...['backup', 'create', backupName, '--include-namespaces', namespace],
      ...['--local', '--dir', dir, '--kubeconfig', source.kubeconfig],
    ]);
    expect(made.code).toBe(0);
    const proxied = join(dir, '..', `${uniqueName('proxied')}.kubeconfig`);
    await writeFile(proxied, kc.exportConfig().split(source.server).join(proxy.url), { mode: 0o600 });
    const name = uniqueName('killed-restore');
    const target = uniqueName('killed-target');
    const held = afterRequests(proxy, { method: 'POST', after: 12, fault: () => proxy.pause() });
    const child = start([
      ...[
        'restore',
        'create',
        name,
        '--from-backup',
        backupName,
        '--namespace-mappings',
        `${namespace}:${target}`,
      ],
      ...['--local', '--dir', dir, '--kubeconfig', proxied],
    ]);
    const exited = new Promise((resolve) => child.on('exit', resolve));
    await waitFor(
      'the restore to hang on the paused apiserver',
      async () => held.fired && proxy.counts.held > 0,
    );
    child.kill('SIGKILL');
    await exited;
    proxy.resume();

    await sleep(LEASE_SECONDS * 1000 + 500);
    const described = await lifeboat(['restore', 'describe', name, '--local', '--dir', dir, '-o', 'json']);
    expect(described.code).toBe(0);
    const record = JSON.parse(described.out) as {
      status: { phase: string; failureReason: string; progress: { itemsRestored: number } };
    };
    expect(record.status).toMatchObject({
      phase: 'Failed',
      failureReason: expect.stringMatching(/RunAbandoned: run local-.* stopped renewing its claim/),
    });
    const present = (await objectsIn(kc, target)).length;
    expect(present).toBeGreaterThan(0);
    expect(record.status.progress.itemsRestored).toBeLessThanOrEqual(present + 1);
    // The name stays taken: a new restore of it is refused, saying so.
    const again = await lifeboat([
      ...[
        'restore',
        'create',
        name,
        '--from-backup',
        backupName,
        '--namespace-mappings',
        `${namespace}:${target}`,
      ],
      ...['--local', '--dir', dir, '--kubeconfig', source.kubeconfig],
    ]);
    expect(again.code).not.toBe(0);
    expect(again.err).toContain(`a restore named "${name}" already exists`);
  });

  it('a request that crashed after claiming its name (--ttl past any date) is refused by field, the name left free', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lifeboat-ttl-'));
    const name = uniqueName('ttl');
    const create = ['backup', 'create', name, '--include-namespaces', namespace, '--local', '--dir', dir];
    const refused = await lifeboat([
      ...create,
      '--ttl',
      '9999999999999999999h',
      '--kubeconfig',
      source.kubeconfig,
    ]);
    // Refused as a bad request (the command checks the flag; ValidateBackup checks it again for
    // requests that come another way: test/unit/functions/record-backup-failure).
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('backup.spec.ttl');
    expect(refused.err).not.toContain('RangeError');
    expect(await filesUnder(dir)).toEqual([]);
    const made = await lifeboat([...create, '--kubeconfig', source.kubeconfig]);
    expect(made.out).toContain(`Backup "${name}": Completed`);
  });
});
