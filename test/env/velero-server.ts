/**
 * A real Velero server (built by ensure-tools.ts) run out of cluster against a cluster of the
 * local environment and a bucket of its AWS emulator, as Velero's "run locally" development docs
 * describe: its CRDs from `velero install --crds-only --dry-run -o yaml`, the `velero`
 * namespace, a replicas-0 `velero` Deployment (its pod-volume restore action looks it up), a
 * BackupStorageLocation for the bucket (path-style, the emulator's URL), a VolumeSnapshotLocation
 * for EBS, and a short backup-sync period. Only one Velero server can run on a host
 * (controller-runtime's metrics port, :8080, is fixed). Used by the interop tests and the
 * benchmarks; knows nothing of vitest.
 */
import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
} from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import type { VeleroTools } from './ensure-tools.js';
import { freePorts, type ManagedProcess, startProcess, stopPids, waitReady } from './processes.js';

const run = promisify(execFile);

export const VELERO_NAMESPACE = 'velero';

/** Where Velero keeps its backups: a bucket of the emulator. */
export interface VeleroStorage {
  readonly endpoint: string;
  readonly region: string;
  readonly bucket: string;
  /** The storage location's prefix: where both tools' backups live in the bucket. */
  readonly prefix: string;
}

export interface VeleroServer {
  readonly storage: VeleroStorage;
  readonly process: ManagedProcess;
  /** Runs the `velero` command against the cluster; stdout, or throws with its stderr. */
  cli(args: readonly string[], options?: { timeoutMs?: number }): Promise<string>;
  stop(): Promise<void>;
}

/** The emulator takes any static keys; the AWS plugin reads them from its environment. */
const AWS_KEYS = { AWS_ACCESS_KEY_ID: 'testing', AWS_SECRET_ACCESS_KEY: 'testing' };

/** Creates every object of a YAML stream, leaving those that exist. */
async function applyAll(kc: KubeConfig, yamlText: string): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(kc);
  for (const doc of parseAllDocuments(yamlText)) {
    const object = doc.toJS() as { kind?: string; items?: unknown[] } | null;
    if (!object?.kind) continue;
    const items = object.kind.endsWith('List') ? (object.items ?? []) : [object];
    for (const item of items) await api.create(item as Parameters<typeof api.create>[0]).catch(unlessExists);
  }
}

function unlessExists(error: unknown): void {
  if ((error as { code?: number }).code !== 409) throw error;
}

async function installCrds(tools: VeleroTools, kc: KubeConfig): Promise<void> {
  const { stdout } = await run(tools.binary, ['install', '--crds-only', '--dry-run', '-o', 'yaml'], {
    maxBuffer: 64 * 2 ** 20,
  });
  await applyAll(kc, stdout);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const served = await custom
      .listNamespacedCustomObject({
        group: 'velero.io',
        version: 'v1',
        namespace: VELERO_NAMESPACE,
        plural: 'backupstoragelocations',
      })
      .then(
        () => true,
        () => false,
      );
    if (served) return;
    if (Date.now() > deadline) throw new Error('test environment: Velero’s CRDs were not served in 60 s');
    await new Promise((r) => setTimeout(r, 250));
  }
}

const veleroObject = (plural: string, kind: string, name: string, spec: Record<string, unknown>) => ({
  group: 'velero.io',
  version: 'v1',
  namespace: VELERO_NAMESPACE,
  plural,
  body: { apiVersion: 'velero.io/v1', kind, metadata: { name, namespace: VELERO_NAMESPACE }, spec },
});

async function installServerObjects(kc: KubeConfig, storage: VeleroStorage): Promise<void> {
  await kc
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: VELERO_NAMESPACE } } })
    .catch(unlessExists);
  await kc
    .makeApiClient(AppsV1Api)
    .createNamespacedDeployment({
      namespace: VELERO_NAMESPACE,
      body: {
        metadata: { name: 'velero', labels: { component: 'velero' } },
        spec: {
          replicas: 0,
          selector: { matchLabels: { deploy: 'velero' } },
          template: {
            metadata: { labels: { deploy: 'velero', component: 'velero' } },
            spec: { containers: [{ name: 'velero', image: 'velero/velero:v1.18.3' }] },
          },
        },
      },
    })
    .catch(unlessExists);
  const custom = kc.makeApiClient(CustomObjectsApi);
  await custom
    .createNamespacedCustomObject(
      veleroObject('backupstoragelocations', 'BackupStorageLocation', 'default', {
        provider: 'aws',
        default: true,
        objectStorage: { bucket: storage.bucket, prefix: storage.prefix },
        config: { region: storage.region, s3ForcePathStyle: 'true', s3Url: storage.endpoint },
      }),
    )
    .catch(unlessExists);
  await custom
    .createNamespacedCustomObject(
      veleroObject('volumesnapshotlocations', 'VolumeSnapshotLocation', 'default', {
        provider: 'aws',
        config: { region: storage.region },
      }),
    )
    .catch(unlessExists);
}

/** Installs Velero's objects in the cluster, creates the bucket, and starts the server. */
export async function startVeleroServer(options: {
  tools: VeleroTools;
  kubeconfig: string;
  storage: VeleroStorage;
  /** More `velero server` flags (e.g. `--item-block-worker-count=4`). */
  serverArgs?: readonly string[];
}): Promise<VeleroServer> {
  const { tools, kubeconfig, storage } = options;
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const s3 = new S3Client({
    endpoint: storage.endpoint,
    region: storage.region,
    forcePathStyle: true,
    credentials: { accessKeyId: AWS_KEYS.AWS_ACCESS_KEY_ID, secretAccessKey: AWS_KEYS.AWS_SECRET_ACCESS_KEY },
  });
  await s3.send(new CreateBucketCommand({ Bucket: storage.bucket })).catch((error: { name?: string }) => {
    if (error.name !== 'BucketAlreadyOwnedByYou') throw error;
  });
  await installCrds(tools, kc);
  await installServerObjects(kc, storage);
  const dir = await mkdtemp(join(tmpdir(), 'lifeboat-velero-'));
  const ports = await freePorts(['metrics', 'profiler']);
  const proc = await startProcess({
    component: 'velero server',
    command: tools.binary,
    args: [
      'server',
      `--kubeconfig=${kubeconfig}`,
      `--namespace=${VELERO_NAMESPACE}`,
      `--plugin-dir=${tools.pluginDir}`,
      `--metrics-address=127.0.0.1:${ports.metrics}`,
      `--profiler-address=127.0.0.1:${ports.profiler}`,
      '--backup-sync-period=2s',
      '--store-validation-frequency=5s',
      '--log-level=info',
      ...(options.serverArgs ?? []),
    ],
    logFile: join(dir, 'velero-server.log'),
    // The AWS plugin (the server's child) reaches the emulator for EC2 through the SDK's
    // AWS_ENDPOINT_URL; S3 goes to the storage location's s3Url.
    env: {
      VELERO_NAMESPACE,
      ...AWS_KEYS,
      AWS_REGION: storage.region,
      AWS_ENDPOINT_URL: storage.endpoint,
      HOME: dir,
    },
  });
  const custom = kc.makeApiClient(CustomObjectsApi);
  await waitReady(
    proc,
    async () => {
      const bsl = (await custom.getNamespacedCustomObject({
        group: 'velero.io',
        version: 'v1',
        namespace: VELERO_NAMESPACE,
        plural: 'backupstoragelocations',
        name: 'default',
      })) as { status?: { phase?: string } };
      return bsl.status?.phase === 'Available';
    },
    180_000,
  );
  return {
    storage,
    process: proc,
    async cli(args, cliOptions = {}) {
      try {
        const { stdout } = await run(
          tools.binary,
          [...args, `--kubeconfig=${kubeconfig}`, `--namespace=${VELERO_NAMESPACE}`],
          {
            timeout: cliOptions.timeoutMs ?? 120_000,
            maxBuffer: 64 * 2 ** 20,
            env: { ...process.env, HOME: dir },
          },
        );
        return stdout;
      } catch (error) {
        const failed = error as { stderr?: string; stdout?: string; message: string };
        throw new Error(
          `velero ${args.join(' ')} failed: ${failed.stderr || failed.stdout || failed.message}`,
        );
      }
    },
    async stop() {
      await stopPids([proc.pid]);
    },
  };
}
