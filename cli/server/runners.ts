/**
 * What runs the local server's executions: each workflow as `lifeboat --local` runs it, against
 * the cluster the request names, the server's directory (and the data mover's repository there,
 * its key file outside it), and EC2 for native snapshots when a region is known.
 */

import type { KubernetesCluster } from '../../shared/adapters/kubernetes-cluster.js';
import type { JsonValue } from '../../shared/adapters/local-state-machine.js';
import type { Workflow } from '../../shared/ports/executions.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { runLocalBackup } from '../local/backup-runtime.js';
import { runLocalDelete } from '../local/delete-runtime.js';
import { runLocalDrill } from '../local/drill-runtime.js';
import { localRepository, repositoryKeyFile } from '../local/local-data-mover.js';
import { runLocalRestore } from '../local/restore-runtime.js';
import { snapshotRegion, snapshotterOf } from '../snapshots.js';
import type { WorkflowRunner } from './local-executions.js';

const clusterOf = (input: JsonValue): string =>
  String(((input as { request?: { cluster?: unknown } }).request?.cluster as string | undefined) ?? '');

export async function localRunners(options: {
  readonly store: ObjectStore;
  readonly clusterNamed: (name: string) => Promise<KubernetesCluster>;
  readonly values: { readonly 'snapshot-region'?: string; readonly 'repository-key-file'?: string };
}): Promise<Record<Workflow, WorkflowRunner>> {
  const { store, clusterNamed, values } = options;
  const snapshots = await snapshotterOf(values['snapshot-region']);
  const region = snapshotRegion(values['snapshot-region']);
  const repository = localRepository(store, repositoryKeyFile(values['repository-key-file']));
  const dataMover = { repository, ...(region ? { region } : {}) };
  return {
    backup: async ({ input, executionName }) =>
      runLocalBackup((input as { request: unknown }).request, {
        cluster: await clusterNamed(clusterOf(input)),
        store,
        executionName,
        dataMover,
        ...snapshots,
      }),
    restore: async ({ input, executionName }) =>
      runLocalRestore((input as { request: unknown }).request, {
        cluster: await clusterNamed(clusterOf(input)),
        store,
        executionName,
        dataMover,
        ...snapshots,
      }),
    delete: ({ input, executionName }) =>
      runLocalDelete(input as { name: string; attempt: number }, {
        store,
        executionName,
        repository,
        ...snapshots,
      }),
    drill: async ({ input, executionName }) =>
      runLocalDrill((input as { request: unknown }).request, {
        cluster: await clusterNamed(clusterOf(input)),
        store,
        executionName,
        dataMover,
        ...snapshots,
      }),
  };
}
