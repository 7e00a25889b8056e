/**
 * Backups put in a store as another Velero (or a hostile author) would have written them: a
 * tarball built entry by entry with tar-stream, then `velero-backup.json`; and a restore of one
 * through `lifeboat --local`, its failure returned rather than thrown.
 */
import { gzipSync } from 'node:zlib';
import type { KubeConfig } from '@kubernetes/client-node';
import { pack } from 'tar-stream';
import { runLocalRestore } from '../../../cli/local/restore-runtime.js';
import { KubernetesCluster } from '../../../shared/adapters/kubernetes-cluster.js';
import { ExecutionFailed } from '../../../shared/adapters/local-state-machine.js';
import { backupKeys } from '../../../shared/domain/storage/keys.js';
import type { ObjectStore } from '../../../shared/ports/object-store.js';
import { uniqueName } from './env.js';

export interface Entry {
  name: string;
  body?: string | Buffer;
  type?: 'file' | 'symlink';
  linkname?: string;
}

/** The entries as one gzip'd tar, in the order given (duplicates and all). */
export async function tarball(entries: Entry[]): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  p.on('data', (c: unknown) => chunks.push(Buffer.from(c as Uint8Array)));
  const done = new Promise<void>((resolve) => p.on('end', () => resolve()));
  for (const e of entries) {
    if ((e.type ?? 'file') === 'file') p.entry({ name: e.name, mode: 0o755 }, e.body ?? '');
    else p.entry({ name: e.name, type: 'symlink', linkname: e.linkname ?? '' });
  }
  p.finalize();
  await done;
  return gzipSync(Buffer.concat(chunks));
}

/** A Completed backup's `velero-backup.json`, as Velero writes it. */
export function veleroBackupDocument(name: string): Record<string, unknown> {
  return {
    apiVersion: 'velero.io/v1',
    kind: 'Backup',
    metadata: { name, namespace: 'velero' },
    spec: { includedNamespaces: ['*'], ttl: '720h0m0s', storageLocation: 'default' },
    status: {
      phase: 'Completed',
      formatVersion: '1.1.0',
      version: 1,
      startTimestamp: '2026-01-01T00:00:00Z',
      expiration: '2026-02-01T00:00:00Z',
    },
  };
}

/** Puts a backup in the store as Velero would have written it: tarball, then velero-backup.json. */
export async function putVeleroBackup(store: ObjectStore, name: string, entries: Entry[]): Promise<void> {
  const keys = backupKeys(name);
  await store.put(keys.contents, await tarball(entries));
  await store.put(keys.metadata, JSON.stringify(veleroBackupDocument(name)));
}

/** Restores the backup with `lifeboat --local`: the output, or the failure the execution ended with. */
export async function restoreLocally(options: {
  kc: KubeConfig;
  store: ObjectStore;
  spec: Record<string, unknown>;
  name?: string;
}) {
  const name = options.name ?? uniqueName('r');
  try {
    const output = await runLocalRestore(
      { cluster: 'target', restore: { metadata: { name }, spec: options.spec } },
      { cluster: new KubernetesCluster(options.kc), store: options.store },
    );
    return { ok: true as const, name, output };
  } catch (error) {
    if (error instanceof ExecutionFailed) return { ok: false as const, name, ...error.failure };
    throw error;
  }
}
