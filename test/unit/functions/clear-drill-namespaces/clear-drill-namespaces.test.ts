/**
 * ClearDrillNamespaces with the cluster port in memory: it deletes only the namespaces a drill
 * made, waits while they go, and gives up at the drill's deadline naming them; FinishDrill then
 * reports the drill Failed with that reason, nothing restored.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { clearDrillNamespaces } from '../../../../functions/clear-drill-namespaces/clear-drill-namespaces.js';
import { readDrillReport } from '../../../../functions/common/drill-records.js';
import { finishDrill } from '../../../../functions/finish-drill/finish-drill.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import type { DrillRun } from '../../../../shared/contracts/drill.js';
import { drillKeys } from '../../../../shared/domain/storage/keys.js';
import { backupFile } from '../../../../shared/domain/storage/stored-files.js';
import type { ClusterWriter } from '../../../../shared/ports/cluster.js';

type Json = Record<string, unknown>;

/** Namespaces in memory; a deleted one stays terminating (its content is never removed here). */
class FakeNamespaces {
  readonly deleted: string[] = [];
  constructor(readonly namespaces: Map<string, Json>) {}
  writer(): ClusterWriter {
    const nameOf = (o: Json) => String((o.metadata as { name?: string }).name);
    return {
      read: async ({ object }) => this.namespaces.get(nameOf(object)),
      delete: async ({ object }) => {
        const name = nameOf(object);
        const ns = this.namespaces.get(name);
        if (!ns) return false;
        this.deleted.push(name);
        this.namespaces.set(name, {
          ...ns,
          metadata: { ...(ns.metadata as Json), deletionTimestamp: '2026-11-28T03:00:00Z' },
        });
        return true;
      },
    } as Partial<ClusterWriter> as ClusterWriter;
  }
}

const namespace = (name: string, restoreName?: string): [string, Json] => [
  name,
  { metadata: { name, ...(restoreName ? { labels: { 'velero.io/restore-name': restoreName } } : {}) } },
];

const run: DrillRun = {
  name: 'weekly-drill-2',
  runId: 'r2',
  cluster: 'dr',
  backupName: 'weekly-2',
  backupStartedAt: '2026-11-28T02:00:00Z',
  namespaceMapping: { shop: 'shop-dr', db: 'db-dr' },
  startedAt: '2026-11-28T03:00:00Z',
  readyDeadline: '2026-11-28T03:10:00Z',
  restoreName: 'weekly-drill-2',
  pollSeconds: 10,
};

async function setUp() {
  const store = new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'lifeboat-clear-drill-')));
  const list = { 'v1/ConfigMap': ['shop/web-config', 'db/settings', 'tools/theirs'] };
  await store.put(backupFile(run.backupName, 'resourceList').key, gzipSync(JSON.stringify(list)));
  // The earlier drill's report: its name is a drill's.
  await store.put(drillKeys({ name: 'weekly-drill-1' }).report, '{}');
  const cluster = new FakeNamespaces(
    new Map([
      namespace('shop-dr', 'weekly-drill-1'),
      namespace('db-dr', 'a-manual-restore'),
      namespace('tools'),
      namespace('elsewhere', 'weekly-drill-1'),
    ]),
  );
  const at = (iso: string) => ({ now: () => new Date(iso) });
  const deps = (now: string) => ({ store, clock: at(now), clusterNamed: async () => cluster.writer() });
  return { store, cluster, deps };
}

describe('clearing an earlier drill’s namespaces', () => {
  it('deletes only the target namespaces a drill made, then waits while they go', async () => {
    const { cluster, deps } = await setUp();

    const first = await clearDrillNamespaces({ run }, deps('2026-11-28T03:00:01Z'));
    const again = await clearDrillNamespaces({ run }, deps('2026-11-28T03:00:11Z'));

    expect(cluster.deleted).toEqual(['shop-dr']);
    expect(first).toEqual({ cleared: false, expired: false, deleted: 1, deleting: 0, kept: 2 });
    expect(again).toEqual({ cleared: false, expired: false, deleted: 0, deleting: 1, kept: 2 });
    cluster.namespaces.delete('shop-dr');
    expect(await clearDrillNamespaces({ run }, deps('2026-11-28T03:00:21Z'))).toMatchObject({
      cleared: true,
      deleted: 0,
      deleting: 0,
    });
  });

  it('gives up at the deadline naming what is left, and the drill fails with nothing restored', async () => {
    const { store, deps } = await setUp();
    await clearDrillNamespaces({ run }, deps('2026-11-28T03:00:01Z'));

    const late = await clearDrillNamespaces({ run }, deps('2026-11-28T03:10:01Z'));
    await finishDrill(
      { run, restore: { phase: 'New', ...(late.reason ? { clearFailure: late.reason } : {}) } },
      deps('2026-11-28T03:10:02Z'),
    );

    const reason =
      "namespace shop-dr of an earlier drill was still being deleted at the drill's deadline (readyTimeout)";
    expect(late).toMatchObject({ cleared: false, expired: true, reason });
    expect(await readDrillReport(store, run.name)).toMatchObject({
      phase: 'Failed',
      failureReason: `nothing was restored: ${reason}`,
      volumes: [],
    });
  });
});
