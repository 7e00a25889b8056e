import { describe, expect, it } from 'vitest';
import { preview } from '../../../../functions/plan-restore/preview.js';
import type { PlannedItem } from '../../../../shared/contracts/restore-run.js';
import type { ClusterWriter } from '../../../../shared/ports/cluster.js';

type Json = Record<string, unknown>;

/** A cluster that holds the given objects, found by namespace and name; it changes nothing. */
function clusterHolding(objects: readonly Json[]): Pick<ClusterWriter, 'read'> {
  const key = (o: Json): string => {
    const m = (o.metadata ?? {}) as { namespace?: string; name?: string };
    return `${String(o.kind)}/${m.namespace ?? ''}/${m.name ?? ''}`;
  };
  const held = new Map(objects.map((o) => [key(o), o]));
  return { read: async ({ object }) => held.get(key(object)) };
}

const rootCa = (namespace: string, ca: string): Json => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'kube-root-ca.crt', namespace, annotations: { 'kubernetes.io/description': 'root CA' } },
  data: { 'ca.crt': ca },
});

const planned = (groupResource: string, object: Json): PlannedItem => ({
  groupResource,
  sourceNamespace: 'shop',
  object,
});

async function previewOf(backedUpCa: string, cluster: Pick<ClusterWriter, 'read'>) {
  const items = [
    planned('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop-dr' } }),
    planned('configmaps', rootCa('shop-dr', backedUpCa)),
  ];
  const order = ['namespaces', 'configmaps'];
  return preview({ sequence: [{ order, items }], deps: { cluster }, policy: 'none' });
}

describe('a dry run of the root-CA ConfigMap in a namespace the restore creates', () => {
  it('foresees the warning the restore gives when the cluster’s CA differs from the backed-up one', async () => {
    const entries = await previewOf('old-cluster-ca', clusterHolding([rootCa('default', 'this-cluster-ca')]));
    expect(entries[1]).toEqual({
      phase: 'configmaps',
      item: 'shop-dr/kube-root-ca.crt',
      action: 'skip',
      reason:
        'could not restore, ConfigMap:kube-root-ca.crt already exists. Warning: the in-cluster version is different than the backed-up version',
    });
  });

  it('foresees a quiet skip when the cluster’s CA is the backed-up one', async () => {
    const entries = await previewOf('same-ca', clusterHolding([rootCa('default', 'same-ca')]));
    expect(entries[1]).toMatchObject({ action: 'skip', reason: expect.not.stringContaining('Warning') });
  });
});
