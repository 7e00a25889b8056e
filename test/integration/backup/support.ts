/** Running local backups in integration tests against the real cluster and a store. */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { type LocalBackupOptions, runLocalBackup } from '../../../cli/local/backup-runtime.js';
import { KubernetesCluster } from '../../../shared/adapters/kubernetes-cluster.js';
import { LocalDirectoryStore } from '../../../shared/adapters/local-directory-store.js';
import { ExecutionFailed, type JsonValue } from '../../../shared/adapters/local-state-machine.js';
import type { ObjectStore } from '../../../shared/ports/object-store.js';

export async function tempStore(): Promise<LocalDirectoryStore> {
  return new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'lifeboat-store-')));
}

export function backupRequest(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return {
    cluster: 'source',
    backup: { apiVersion: 'velero.io/v1', kind: 'Backup', metadata: { name }, spec },
  };
}

export type Outcome = { ok: true; output: JsonValue } | { ok: false; error: string; cause: string };

export async function backup(options: {
  kc: KubeConfig;
  store: ObjectStore;
  request: Record<string, unknown>;
  extra?: Partial<LocalBackupOptions>;
}): Promise<Outcome> {
  try {
    const output = await runLocalBackup(options.request, {
      cluster: new KubernetesCluster(options.kc),
      store: options.store,
      ...options.extra,
    });
    return { ok: true, output };
  } catch (error) {
    if (error instanceof ExecutionFailed) return { ok: false, ...error.failure };
    throw error;
  }
}
