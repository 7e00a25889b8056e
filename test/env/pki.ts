/**
 * Certificates and credentials of a local test cluster, made with openssl: a CA, the
 * apiserver's serving certificate for loopback, the service-account key pair, and a static
 * admin token.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface ClusterPki {
  readonly dir: string;
  readonly caCert: string;
  readonly caKey: string;
  readonly apiserverCert: string;
  readonly apiserverKey: string;
  readonly serviceAccountKey: string;
  readonly serviceAccountPub: string;
  readonly tokenFile: string;
  readonly adminToken: string;
}

async function openssl(dir: string, args: readonly string[]): Promise<void> {
  try {
    await run('openssl', [...args], { cwd: dir });
  } catch (error) {
    throw new Error(`test environment: openssl ${args[0]} failed`, { cause: error });
  }
}

export async function makePki(dir: string): Promise<ClusterPki> {
  await mkdir(dir, { recursive: true });
  const days = '3650';
  await openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    days,
    '-subj',
    '/CN=lifeboat-test-ca',
  ]);
  await openssl(dir, [
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'apiserver.key',
    '-out',
    'apiserver.csr',
    '-subj',
    '/CN=kube-apiserver',
  ]);
  await writeFile(
    join(dir, 'san.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost,IP:10.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\n',
  );
  await openssl(dir, [
    'x509',
    '-req',
    '-in',
    'apiserver.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    days,
    '-extfile',
    'san.ext',
    '-out',
    'apiserver.crt',
  ]);
  await openssl(dir, ['genrsa', '-out', 'sa.key', '2048']);
  await openssl(dir, ['rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub']);
  const adminToken = randomBytes(24).toString('hex');
  await writeFile(join(dir, 'tokens.csv'), `${adminToken},admin,admin,"system:masters"\n`, { mode: 0o600 });
  return {
    dir,
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    apiserverCert: join(dir, 'apiserver.crt'),
    apiserverKey: join(dir, 'apiserver.key'),
    serviceAccountKey: join(dir, 'sa.key'),
    serviceAccountPub: join(dir, 'sa.pub'),
    tokenFile: join(dir, 'tokens.csv'),
    adminToken,
  };
}
