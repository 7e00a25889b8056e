/**
 * The cluster adapter's credentials against the real apiserver: a client certificate written in
 * the kubeconfig (read once into the adapter's connections) serves request after request, and an
 * exec credential plugin, whose tokens expire, is asked again as each one expires.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterFromKubeconfig } from '../../../shared/adapters/kubernetes-cluster.js';
import { testEnv } from '../support/env.js';

const run = promisify(execFile);

/** A kubeconfig of the source cluster for this user entry (YAML lines under `user:`). */
async function kubeconfigWith(user: readonly string[]): Promise<string> {
  const cluster = testEnv().clusters.source;
  const ca = (await readFile(cluster.caFile)).toString('base64');
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: c',
    '  cluster:',
    `    server: ${cluster.server}`,
    `    certificate-authority-data: ${ca}`,
    'users:',
    '- name: u',
    '  user:',
    ...user.map((line) => `    ${line}`),
    'contexts:',
    '- name: x',
    '  context: {cluster: c, user: u}',
    'current-context: x',
    '',
  ].join('\n');
}

describe('the cluster adapter’s kubeconfig credentials', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lifeboat-credentials-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reaches the apiserver with the kubeconfig’s client certificate for every request', async () => {
    // Prepare: a client certificate for a cluster admin, signed by the cluster's CA.
    const pki = dirname(testEnv().clusters.source.caFile);
    await run('openssl', ['genrsa', '-out', join(dir, 'client.key'), '2048']);
    await run('openssl', [
      ...['req', '-new', '-key', join(dir, 'client.key'), '-out', join(dir, 'client.csr')],
      ...['-subj', '/O=system:masters/CN=certificate-admin'],
    ]);
    await run('openssl', [
      ...['x509', '-req', '-in', join(dir, 'client.csr'), '-CA', join(pki, 'ca.crt')],
      ...['-CAkey', join(pki, 'ca.key'), '-CAcreateserial', '-days', '1'],
      ...['-out', join(dir, 'client.crt')],
    ]);
    const cert = (await readFile(join(dir, 'client.crt'))).toString('base64');
    const key = (await readFile(join(dir, 'client.key'))).toString('base64');
    const cluster = await clusterFromKubeconfig({
      text: await kubeconfigWith([`client-certificate-data: ${cert}`, `client-key-data: ${key}`]),
    });

    // Act: more requests in parallel than the adapter keeps connections.
    const reads = await Promise.all(
      Array.from({ length: 40 }, () =>
        cluster.read({
          resource: 'namespaces',
          object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } },
        }),
      ),
    );

    // Assess: each one authenticated (an anonymous request is refused, 401/403).
    expect(reads.every((r) => (r?.metadata as { name?: string } | undefined)?.name === 'default')).toBe(true);
  });

  it('asks an exec credential plugin again for each request once its token has expired', async () => {
    // Prepare: a plugin that counts its runs and hands out the admin token, already expired.
    const token = (await readFile(testEnv().clusters.source.kubeconfig, 'utf8')).match(/token: (\S+)/)?.[1];
    expect(token).toBeDefined();
    const counter = join(dir, 'runs');
    await writeFile(counter, '');
    const plugin = join(dir, 'plugin.mjs');
    await writeFile(
      plugin,
      [
        "import { appendFileSync } from 'node:fs';",
        `appendFileSync(${JSON.stringify(counter)}, 'x');`,
        'console.log(JSON.stringify({',
        "  apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential',",
        `  status: { token: ${JSON.stringify(token)}, expirationTimestamp: '2000-01-01T00:00:00Z' },`,
        '}));',
      ].join('\n'),
    );
    const cluster = await clusterFromKubeconfig({
      text: await kubeconfigWith([
        'exec:',
        '  apiVersion: client.authentication.k8s.io/v1',
        `  command: ${process.execPath}`,
        `  args: [${JSON.stringify(plugin)}]`,
        '  interactiveMode: Never',
      ]),
    });

    // Act: three requests, one after the other.
    for (let i = 0; i < 3; i++) await cluster.serverVersion();

    // Assess: the plugin ran for each (a token kept from the first would have run it once).
    expect((await readFile(counter, 'utf8')).length).toBe(3);
  });
});
