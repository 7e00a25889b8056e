/**
 * The remote `dr drill|get|describe` verbs end to end against `lifeboat server --local` serving a
 * source and a DR cluster, compiled as users run them: a drill through POST /drills followed to
 * its report, the reports read back as --local reads them from the server's directory; refusals
 * named by their flag; and a Schedule's drill target created and read through the API.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtLifeboat, commandEnv, type Ran, run, startServer } from '../cli/support.js';
import { kubeConfigFor, testEnv, uniqueName, useDrCluster } from '../support/env.js';

describe('the remote dr verbs against lifeboat server --local', () => {
  const dr = useDrCluster();
  let root: string;
  let bin: string;
  let dir: string;
  let server: ChildProcess;
  let env: NodeJS.ProcessEnv;
  let namespace: string;
  const core = () => kubeConfigFor(testEnv().clusters.source).makeApiClient(CoreV1Api);
  const lifeboat = (...args: string[]): Promise<Ran> => run({ bin, args, env, timeoutMs: 240_000 });
  const local = () => ['--local', '--dir', dir];

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'lifeboat-remote-drills-'));
    dir = join(root, 'store');
    ({ bin } = await builtLifeboat());
    env = commandEnv({
      LIFEBOAT_TOKEN_FILE: join(root, 'token'),
      LIFEBOAT_CONFIG: join(root, 'config.json'),
      LIFEBOAT_ENDPOINT: undefined,
    });
    namespace = uniqueName('remote-d');
    await core().createNamespace({ body: { metadata: { name: namespace } } });
    await core().createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'settings' }, data: { mode: 'live' } },
    });
    const clusters = `source=${testEnv().clusters.source.kubeconfig},dr=${dr().kubeconfig}`;
    let endpoint: string;
    ({ server, endpoint } = await startServer({
      bin,
      args: ['--local', '--dir', dir, '--clusters', clusters, '--repository-key-file', join(root, 'key')],
      env,
    }));
    env = { ...env, LIFEBOAT_ENDPOINT: endpoint };
  }, 240_000);

  afterAll(async () => {
    server?.kill('SIGTERM');
    await core()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined);
    await kubeConfigFor(dr())
      .makeApiClient(CoreV1Api)
      .deleteNamespace({ name: `${namespace}-dr` })
      .catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });

  it('drills a backup into the DR cluster through the API and reads its report as --local does', async () => {
    // Prepare: a backup made through the server.
    const made = await lifeboat(
      ...['backup', 'create', 'for-drill', '--cluster', 'source', '--include-namespaces', namespace],
      '--wait',
    );
    expect(made.code, made.stderr).toBe(0);

    // Act
    const drilled = await lifeboat(
      ...['dr', 'drill', 'remote-drill', '--from-backup', 'for-drill', '--cluster', 'dr'],
      ...['--namespace-mappings', `${namespace}:${namespace}-dr`, '--timeout', '2m'],
    );

    // Assess: the report, the restored item in the DR cluster, the same reads as --local.
    expect(drilled.code, drilled.stderr).toBe(0);
    expect(drilled.stderr).toContain('Drill "remote-drill" started through http');
    expect(drilled.stdout).toMatch(/Drill "remote-drill": Completed\n/);
    expect(drilled.stdout).toMatch(/RPO: +\d+s/);
    expect(drilled.stdout).toContain('Mismatches: 0');
    const restored = await kubeConfigFor(dr())
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ namespace: `${namespace}-dr`, name: 'settings' });
    expect(restored.data).toEqual({ mode: 'live' });
    for (const args of [
      ['dr', 'get'],
      ['dr', 'get', 'remote-drill', '-o', 'json'],
      ['dr', 'describe', 'remote-drill'],
      ['dr', 'describe', 'remote-drill', '-o', 'json'],
    ]) {
      const remote = await lifeboat(...args);
      const here = await lifeboat(...args, ...local());
      expect(remote.code, remote.stderr).toBe(0);
      expect(remote.stdout).toBe(here.stdout);
    }
    expect((await lifeboat('dr', 'get')).stdout).toMatch(/remote-drill +Completed +for-drill +dr /);
  });

  it('names what is wrong: an unknown cluster by its flag, a missing drill, a --local flag', async () => {
    const unknown = await lifeboat('dr', 'drill', '--from-backup', 'for-drill', '--cluster', 'nowhere');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--cluster');
    expect(unknown.stderr).toContain('"nowhere" is not a cluster this deployment serves');
    const missingBackup = await lifeboat('dr', 'drill', '--from-backup', 'no-such', '--cluster', 'dr');
    expect(missingBackup.code).toBe(1);
    expect(missingBackup.stdout + missingBackup.stderr).toContain('backup "no-such" does not exist');
    const missing = await lifeboat('dr', 'describe', 'gone');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('gone');
    const kubeconfig = await lifeboat('dr', 'drill', '--from-backup', 'x', '--kubeconfig', 'k');
    expect(kubeconfig.code).toBe(2);
    expect(kubeconfig.stderr).toContain('--kubeconfig is for --local runs');
  });

  it('creates a Schedule with a drill target through the API, refusing an unknown drill cluster by its flag', async () => {
    const bad = await lifeboat(
      ...['schedule', 'create', 'drilled', '--schedule', '0 3 * * 0', '--cluster', 'source'],
      ...['--drill-cluster', 'nowhere'],
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--drill-cluster (drill.cluster)');
    const created = await lifeboat(
      ...['schedule', 'create', 'drilled', '--schedule', '0 3 * * 0', '--cluster', 'source'],
      ...['--drill-cluster', 'dr', '--drill-namespace-mappings', `${namespace}:${namespace}-dr`],
    );
    expect(created.code, created.stderr).toBe(0);
    const described = await lifeboat('schedule', 'describe', 'drilled', '-o', 'json');
    const here = await lifeboat('schedule', 'describe', 'drilled', '-o', 'json', ...local());
    expect(JSON.parse(described.stdout)).toEqual(JSON.parse(here.stdout));
    expect(JSON.parse(described.stdout)).toMatchObject({
      cluster: 'source',
      drill: { cluster: 'dr', namespaceMapping: { [namespace]: `${namespace}-dr` } },
    });
  });
});
