/**
 * One local Kubernetes cluster for tests: embedded etcd, kube-apiserver,
 * kube-controller-manager and kube-scheduler from the kubecp binary, plus KWOK managing a fake
 * node whose pods become Running, and the node's exec endpoint (kubecp exec-server), where
 * `pods/exec` through the apiserver runs commands on this machine. Everything
 * listens on loopback, on free ports, under one directory.
 */

import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import type { Tools } from './ensure-tools.js';
import { makePki } from './pki.js';
import { freePorts, type ManagedProcess, startProcess, stopPids, waitReady } from './processes.js';

export interface ClusterInfo {
  readonly name: string;
  readonly dir: string;
  readonly server: string;
  readonly kubeconfig: string;
  readonly caFile: string;
  readonly token: string;
  /** Commands run through `exec` in a pod start in `<execDir>/<namespace>/<pod>`, on this machine. */
  readonly execDir: string;
  readonly nodeName: string;
  readonly pids: readonly number[];
}

const READY_TIMEOUT_MS = 90_000;

function httpsGet(
  url: string,
  options: { ca?: Buffer; token?: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'GET',
        ca: options.ca,
        rejectUnauthorized: options.ca !== undefined,
        headers: options.token ? { Authorization: `Bearer ${options.token}` } : {},
        timeout: 5000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

async function httpOk(url: string): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
  return res.ok;
}

function kubeconfigYaml(options: { name: string; server: string; caFile: string; token: string }): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${options.name}`,
    '  cluster:',
    `    server: ${options.server}`,
    `    certificate-authority: ${options.caFile}`,
    'users:',
    `- name: ${options.name}-admin`,
    '  user:',
    `    token: ${options.token}`,
    'contexts:',
    `- name: ${options.name}`,
    '  context:',
    `    cluster: ${options.name}`,
    `    user: ${options.name}-admin`,
    `current-context: ${options.name}`,
    '',
  ].join('\n');
}

function kwokConfigYaml(): string {
  return [
    'kind: KwokConfiguration',
    'apiVersion: config.kwok.x-k8s.io/v1alpha1',
    // A KwokConfiguration given by file is not defaulted: every option KWOK needs is set here.
    'options:',
    '  cidr: 10.244.0.0/16',
    '  enableDebuggingHandlers: false',
    '  enableProfilingHandler: false',
    '  enableContentionProfiling: false',
    '  nodeLeaseParallelism: 4',
    '  nodePlayStageParallelism: 4',
    '  podPlayStageParallelism: 4',
    '  podsOnNodeSyncParallelism: 2',
    '  enablePodsOnNodeSyncListPager: true',
    '  enablePodsOnNodeSyncStreamWatch: false',
    '',
  ].join('\n');
}

/** The apiserver flags that send unknown bearer tokens to a TokenReview webhook (not cached). */
async function tokenWebhookFlags(options: { dir: string; url: string }): Promise<string[]> {
  const config = join(options.dir, 'token-webhook.kubeconfig');
  const yaml = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '  - name: webhook',
    `    cluster: { server: "${options.url}" }`,
    'users:',
    '  - name: apiserver',
    '    user: {}',
    'contexts:',
    '  - name: webhook',
    '    context: { cluster: webhook, user: apiserver }',
    'current-context: webhook',
    '',
  ].join('\n');
  await writeFile(config, yaml);
  return [
    `--authentication-token-webhook-config-file=${config}`,
    '--authentication-token-webhook-version=v1',
    '--authentication-token-webhook-cache-ttl=0s',
  ];
}

/** Starts a cluster; on any failure, stops what it had started and rethrows. */
export async function startCluster(options: {
  name: string;
  rootDir: string;
  tools: Tools;
  detached?: boolean;
  /**
   * A webhook that authenticates bearer tokens the apiserver does not know (a TokenReview
   * endpoint, as aws-iam-authenticator is for EKS): the deployment rehearsal's EKS emulation.
   */
  tokenWebhookUrl?: string;
}): Promise<ClusterInfo> {
  const { name, tools } = options;
  const dir = join(options.rootDir, name);
  const logs = join(dir, 'logs');
  const execDir = join(dir, 'exec');
  await mkdir(logs, { recursive: true });
  await mkdir(execDir, { recursive: true });
  const started: ManagedProcess[] = [];
  try {
    const pki = await makePki(join(dir, 'pki'));
    const { etcdPort, etcdPeerPort, apiPort, kcmPort, schedulerPort, kwokPort, execPort } = await freePorts([
      'etcdPort',
      'etcdPeerPort',
      'apiPort',
      'kcmPort',
      'schedulerPort',
      'kwokPort',
      'execPort',
    ]);
    const server = `https://127.0.0.1:${apiPort}`;
    const kubeconfig = join(dir, 'admin.kubeconfig');
    await writeFile(kubeconfig, kubeconfigYaml({ name, server, caFile: pki.caCert, token: pki.adminToken }), {
      mode: 0o600,
    });

    const webhookFlags = options.tokenWebhookUrl
      ? await tokenWebhookFlags({ dir, url: options.tokenWebhookUrl })
      : [];
    const etcd = await startProcess({
      component: `etcd (${name})`,
      command: tools.kubecp,
      args: [
        'etcd',
        `--data-dir=${join(dir, 'etcd')}`,
        `--listen-client-url=http://127.0.0.1:${etcdPort}`,
        `--listen-peer-url=http://127.0.0.1:${etcdPeerPort}`,
      ],
      detached: options.detached,
      logFile: join(logs, 'etcd.log'),
    });
    started.push(etcd);
    await waitReady(etcd, () => httpOk(`http://127.0.0.1:${etcdPort}/health`), READY_TIMEOUT_MS);

    const apiserver = await startProcess({
      component: `kube-apiserver (${name})`,
      command: tools.kubecp,
      args: [
        'kube-apiserver',
        `--etcd-servers=http://127.0.0.1:${etcdPort}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        `--secure-port=${apiPort}`,
        `--cert-dir=${join(dir, 'apiserver-certs')}`,
        `--tls-cert-file=${pki.apiserverCert}`,
        `--tls-private-key-file=${pki.apiserverKey}`,
        `--client-ca-file=${pki.caCert}`,
        `--token-auth-file=${pki.tokenFile}`,
        '--authorization-mode=Node,RBAC',
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        `--service-account-key-file=${pki.serviceAccountPub}`,
        `--service-account-signing-key-file=${pki.serviceAccountKey}`,
        '--service-cluster-ip-range=10.0.0.0/24',
        '--allow-privileged=true',
        '--endpoint-reconciler-type=none',
        '--enable-priority-and-fairness=false',
        '--kubelet-preferred-address-types=InternalIP',
        '--profiling=false',
        ...webhookFlags,
      ],
      detached: options.detached,
      logFile: join(logs, 'kube-apiserver.log'),
    });
    started.push(apiserver);
    const ca = await readFile(pki.caCert);
    await waitReady(
      apiserver,
      async () => (await httpsGet(`${server}/readyz`, { ca, token: pki.adminToken })).status === 200,
      READY_TIMEOUT_MS,
    );

    const kcm = await startProcess({
      component: `kube-controller-manager (${name})`,
      command: tools.kubecp,
      args: [
        'kube-controller-manager',
        `--kubeconfig=${kubeconfig}`,
        `--authentication-kubeconfig=${kubeconfig}`,
        `--authorization-kubeconfig=${kubeconfig}`,
        '--leader-elect=false',
        `--root-ca-file=${pki.caCert}`,
        `--service-account-private-key-file=${pki.serviceAccountKey}`,
        `--cluster-signing-cert-file=${pki.caCert}`,
        `--cluster-signing-key-file=${pki.caKey}`,
        '--use-service-account-credentials=false',
        '--controllers=*',
        '--bind-address=127.0.0.1',
        `--secure-port=${kcmPort}`,
        `--cert-dir=${join(dir, 'kcm-certs')}`,
        '--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics',
      ],
      detached: options.detached,
      logFile: join(logs, 'kube-controller-manager.log'),
    });
    started.push(kcm);

    const scheduler = await startProcess({
      component: `kube-scheduler (${name})`,
      command: tools.kubecp,
      args: [
        'kube-scheduler',
        `--kubeconfig=${kubeconfig}`,
        `--authentication-kubeconfig=${kubeconfig}`,
        `--authorization-kubeconfig=${kubeconfig}`,
        '--leader-elect=false',
        '--bind-address=127.0.0.1',
        `--secure-port=${schedulerPort}`,
        `--cert-dir=${join(dir, 'scheduler-certs')}`,
        '--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics',
      ],
      detached: options.detached,
      logFile: join(logs, 'kube-scheduler.log'),
    });
    started.push(scheduler);

    // The node's kubelet port is the exec server: the apiserver proxies pods/exec there.
    const execServer = await startProcess({
      component: `pod exec server (${name})`,
      command: tools.kubecp,
      args: ['exec-server', `--address=127.0.0.1:${execPort}`, `--root=${execDir}`],
      detached: options.detached,
      logFile: join(logs, 'exec-server.log'),
    });
    started.push(execServer);

    const kwokConfig = join(dir, 'kwok.yaml');
    await writeFile(kwokConfig, kwokConfigYaml());
    const kwok = await startProcess({
      component: `kwok (${name})`,
      command: tools.kwok,
      args: [
        `--kubeconfig=${kubeconfig}`,
        '--manage-all-nodes=false',
        '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
        `--config=${[kwokConfig, ...tools.kwokStages].join(',')}`,
        '--node-ip=127.0.0.1',
        '--node-name=localhost',
        `--node-port=${execPort}`,
        `--server-address=127.0.0.1:${kwokPort}`,
        '--node-lease-duration-seconds=40',
      ],
      detached: options.detached,
      logFile: join(logs, 'kwok.log'),
    });
    started.push(kwok);

    const insecureHealth = (port: number) => async () =>
      (await httpsGet(`https://127.0.0.1:${port}/healthz`, {})).status === 200;
    await Promise.all([
      waitReady(kcm, insecureHealth(kcmPort), READY_TIMEOUT_MS),
      waitReady(scheduler, insecureHealth(schedulerPort), READY_TIMEOUT_MS),
      waitReady(
        kwok,
        async () => (await httpsGet(`https://127.0.0.1:${kwokPort}/healthz`, {})).status === 200,
        READY_TIMEOUT_MS,
      ),
      waitReady(execServer, insecureHealth(execPort), READY_TIMEOUT_MS),
    ]);

    const info: ClusterInfo = {
      name,
      dir,
      server,
      kubeconfig,
      caFile: pki.caCert,
      token: pki.adminToken,
      execDir,
      nodeName: 'kwok-node-0',
      pids: started.map((p) => p.pid),
    };
    await createFakeNode(info, kwok, ca);
    return info;
  } catch (error) {
    await stopPids(started.map((p) => p.pid).reverse());
    throw error;
  }
}

/** Registers the node KWOK manages and waits until KWOK reports it Ready. */
async function createFakeNode(cluster: ClusterInfo, kwok: ManagedProcess, ca: Buffer): Promise<void> {
  const node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: cluster.nodeName,
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: {
        'kubernetes.io/hostname': cluster.nodeName,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'topology.kubernetes.io/region': 'us-east-1',
        'topology.kubernetes.io/zone': 'us-east-1a',
        type: 'kwok',
      },
    },
  };
  const res = await new Promise<number>((resolve, reject) => {
    const body = JSON.stringify(node);
    const req = request(
      `${cluster.server}/api/v1/nodes`,
      {
        method: 'POST',
        ca,
        headers: {
          Authorization: `Bearer ${cluster.token}`,
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
        },
      },
      (r) => {
        r.resume();
        r.on('end', () => resolve(r.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
  if (res !== 201 && res !== 409)
    throw new Error(`test environment: creating the KWOK node failed (HTTP ${res})`);
  await waitReady(
    kwok,
    async () => {
      const r = await httpsGet(`${cluster.server}/api/v1/nodes/${cluster.nodeName}`, {
        ca,
        token: cluster.token,
      });
      const parsed = JSON.parse(r.body) as { status?: { conditions?: { type: string; status: string }[] } };
      return parsed.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
    },
    READY_TIMEOUT_MS,
  );
}

export async function stopCluster(cluster: Pick<ClusterInfo, 'pids'>): Promise<void> {
  // Reverse start order: KWOK and controllers before the apiserver, etcd last.
  await stopPids([...cluster.pids].reverse());
}
