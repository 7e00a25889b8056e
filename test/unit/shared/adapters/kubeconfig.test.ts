import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubeconfigProblem } from '../../../../shared/adapters/errors.js';
import { loadKubeConfig } from '../../../../shared/adapters/kubeconfig.js';

const CA_PEM = '-----BEGIN CERTIFICATE-----\nTk9UIEEgUkVBTCBDQQ==\n-----END CERTIFICATE-----\n';

function kubeconfigText(caFile: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    `clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443", certificate-authority: "${caFile}"}}]`,
    'contexts: [{name: ctx, context: {cluster: c, user: u}}]',
    'current-context: ctx',
    'users: [{name: u, user: {token: a-token}}]',
  ].join('\n');
}

describe('loadKubeConfig and the certificate authority file', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lifeboat-kubeconfig-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads the certificate authority once, so requests no longer read the file', async () => {
    // Prepare
    const caFile = join(dir, 'ca.crt');
    await writeFile(caFile, CA_PEM);
    const path = join(dir, 'config');
    await writeFile(path, kubeconfigText(caFile));
    const kc = await loadKubeConfig({ path });
    await rm(caFile);
    // Act
    const options: RequestOptions = {};
    await kc.applyToHTTPSOptions(options);
    // Assess
    expect(String(options.ca)).toBe(CA_PEM);
    expect(kc.getCurrentCluster()?.caFile).toBeUndefined();
  });

  it('does the same for a kubeconfig given as text', async () => {
    // Prepare
    const caFile = join(dir, 'ca.crt');
    await writeFile(caFile, CA_PEM);
    const kc = await loadKubeConfig({ text: kubeconfigText(caFile) });
    await rm(caFile);
    // Act
    const options: RequestOptions = {};
    await kc.applyToHTTPSOptions(options);
    // Assess
    expect(String(options.ca)).toBe(CA_PEM);
  });

  it('names a certificate authority file that cannot be read, before any request', async () => {
    // Prepare
    const caFile = join(dir, 'missing-ca.crt');
    const path = join(dir, 'config');
    await writeFile(path, kubeconfigText(caFile));
    // Act
    const loading = loadKubeConfig({ path });
    // Assess
    await expect(loading).rejects.toBeInstanceOf(KubeconfigProblem);
    await expect(loading).rejects.toThrow(
      `cluster "c" of the kubeconfig ${path} names the certificate authority ${caFile}, which cannot be read: ENOENT`,
    );
  });
});
