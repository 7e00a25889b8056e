/**
 * The remote schedule verbs, `backup create --from-schedule` and `gc --dry-run` end to end
 * against `lifeboat server --local`, both compiled as users run them: each answer compared with
 * what the server's directory holds (read by the same verbs with --local).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtLifeboat, commandEnv, type Ran, run, startServer } from '../cli/support.js';
import { kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';

describe('the remote schedule verbs against lifeboat server --local', () => {
  let root: string;
  let bin: string;
  let dir: string;
  let server: ChildProcess;
  let env: NodeJS.ProcessEnv;
  let namespace: string;
  const core = () => kubeConfigFor(testEnv().clusters.source).makeApiClient(CoreV1Api);
  const lifeboat = (...args: string[]): Promise<Ran> => run({ bin, args, env, timeoutMs: 240_000 });

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'lifeboat-remote-schedules-'));
    dir = join(root, 'store');
    ({ bin } = await builtLifeboat());
    env = commandEnv({
      LIFEBOAT_TOKEN_FILE: join(root, 'token'),
      LIFEBOAT_CONFIG: join(root, 'config.json'),
      LIFEBOAT_ENDPOINT: undefined,
    });
    namespace = uniqueName('remote-s');
    await core().createNamespace({ body: { metadata: { name: namespace } } });
    await core().createNamespacedConfigMap({ namespace, body: { metadata: { name: 'kept' } } });
    const clusters = `source=${testEnv().clusters.source.kubeconfig}`;
    const key = ['--repository-key-file', join(root, 'repository.key')];
    let endpoint: string;
    ({ server, endpoint } = await startServer({
      bin,
      args: ['--local', '--dir', dir, '--clusters', clusters, ...key],
      env,
    }));
    env = { ...env, LIFEBOAT_ENDPOINT: endpoint };
  }, 240_000);

  afterAll(async () => {
    server?.kill('SIGTERM');
    await core()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });

  it('creates, reads, pauses, unpauses and deletes a schedule through the API', async () => {
    const bad = await lifeboat(
      'schedule',
      'create',
      'bad',
      '--schedule',
      '0 0 */2 * 5',
      '--cluster',
      'source',
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('schedule.spec.schedule');
    const created = await lifeboat(
      'schedule',
      'create',
      'nightly',
      '--schedule',
      '0 3 * * *',
      '--cluster',
      'source',
      '--include-namespaces',
      namespace,
      '--keep-last',
      '2',
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/nightly\s+Enabled\s+0 3 \* \* \*\s+false/);
    const local = await lifeboat('schedule', 'get', 'nightly', '--local', '--dir', dir, '-o', 'json');
    const remote = await lifeboat('schedule', 'get', 'nightly', '-o', 'json');
    expect(remote.code, remote.stderr).toBe(0);
    expect(JSON.parse(remote.stdout)).toEqual(JSON.parse(local.stdout));
    expect((await lifeboat('schedule', 'get')).stdout).toContain('nightly');
    const described = await lifeboat('schedule', 'describe', 'nightly', '-o', 'json');
    expect(JSON.parse(described.stdout)).toMatchObject({
      cluster: 'source',
      schedule: { metadata: { name: 'nightly' } },
    });
    expect((await lifeboat('schedule', 'pause', 'nightly')).stdout).toMatch(
      /nightly\s+Enabled\s+\S+ \S+ \S+ \S+ \S+\s+true/,
    );
    const paused = await lifeboat('schedule', 'get', 'nightly', '--local', '--dir', dir, '-o', 'json');
    expect(JSON.parse(paused.stdout)).toMatchObject({ spec: { paused: true } });
    expect((await lifeboat('schedule', 'unpause', 'nightly')).code).toBe(0);
    const missing = await lifeboat('schedule', 'get', 'gone');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('gone');

    const started = await lifeboat('backup', 'create', '--from-schedule', 'nightly', '-o', 'json');
    expect(started.code, started.stderr).toBe(0);
    const name = (JSON.parse(started.stdout) as { metadata: { name: string } }).metadata.name;
    expect(name).toMatch(/^nightly-\d{14}$/);
    await waitFor(
      'the backup from the schedule to end',
      async () => {
        const got = await lifeboat('backup', 'get', name, '-o', 'json');
        return (JSON.parse(got.stdout) as { status: { phase: string } }).status.phase === 'Completed'
          ? true
          : undefined;
      },
      { timeoutMs: 120_000 },
    );
    const gc = await lifeboat('gc', '--dry-run', '-o', 'json');
    expect(gc.code, gc.stderr).toBe(0);
    expect(JSON.parse(gc.stdout)).toMatchObject({
      kind: 'GarbageCollectionReport',
      dryRun: true,
      deleted: [],
    });
    expect((await lifeboat('gc')).code).toBe(2);

    expect((await lifeboat('schedule', 'delete', 'nightly', '--confirm')).code).toBe(0);
    expect((await lifeboat('schedule', 'get', 'nightly', '--local', '--dir', dir)).code).toBe(1);
    expect((await lifeboat('schedule', 'delete', 'nightly', '--confirm')).code).toBe(1);
  });
});
