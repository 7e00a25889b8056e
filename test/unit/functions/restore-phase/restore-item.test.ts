import { describe, expect, it } from 'vitest';
import { restoreItem } from '../../../../functions/restore-phase/restore-item.js';
import type { LogEvent } from '../../../../shared/domain/storage/log.js';
import type { ClusterWriter } from '../../../../shared/ports/cluster.js';

type Json = Record<string, unknown>;

/** A cluster where every object already exists as `existing`; nothing is ever written. */
function clusterWhereItExists(existing: Json): ClusterWriter {
  const unexpected = async (): Promise<never> => {
    throw new Error('the restore wrote to the cluster');
  };
  return {
    create: async () => ({ result: 'exists', existing }),
    read: async () => existing,
    delete: unexpected,
    mergePatch: unexpected,
    replaceStatus: unexpected,
    waitForCrd: unexpected,
  };
}

describe('restoring an object that exists and differs, under policy none', () => {
  it('skips it with Velero’s warning in its outcome and its log', async () => {
    const existing = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: 'shop', uid: 'u1' },
      data: { mode: 'live' },
    };
    const desired = {
      ...existing,
      metadata: { name: 'settings', namespace: 'shop' },
      data: { mode: 'test' },
    };
    const log: LogEvent[] = [];
    const outcome = await restoreItem(
      { groupResource: 'configmaps', sourceNamespace: 'shop', object: desired },
      {
        run: {
          name: 'r1',
          backupName: 'b1',
          cluster: 'c',
          runId: 'x',
          startedAt: '2026-01-01T00:00:00Z',
          dryRun: false,
        },
        groupResource: 'configmaps',
        policy: 'none',
        cluster: clusterWhereItExists(existing),
        clock: { now: () => new Date('2026-01-01T00:00:01Z') },
        log,
      },
    );
    const warning =
      'could not restore, ConfigMap:settings already exists. Warning: the in-cluster version is different than the backed-up version';
    expect(outcome).toMatchObject({ result: 'skipped', warnings: [warning] });
    expect(log.filter((e) => e.level === 'warning').map((e) => e.msg)).toEqual([warning]);
  });
});
