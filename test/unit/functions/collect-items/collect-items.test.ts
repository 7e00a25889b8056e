/**
 * CollectItems against fakes of our own ports (a scripted cluster, the directory store, an
 * in-memory queue): restarts after 410 Gone without duplicates, and blocks too large for a
 * message travel through the store.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectItems } from '../../../../functions/collect-items/collect-items.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import { LocalTaskCallbacks } from '../../../../shared/adapters/local-task-callbacks.js';
import type { ItemBlockMessage } from '../../../../shared/contracts/backup-run.js';
import { parseItemBlockMessage } from '../../../../shared/contracts/item-block-wire.js';
import { ListExpired } from '../../../../shared/domain/errors.js';
import type { ApiResource } from '../../../../shared/domain/kubernetes/api-resources.js';
import { backupWorkKeys } from '../../../../shared/domain/storage/keys.js';
import type { Cluster, ListPage } from '../../../../shared/ports/cluster.js';
import type { WorkQueue } from '../../../../shared/ports/work-queue.js';

const resource = (name: string, kind: string, namespaced: boolean): ApiResource => ({
  group: '',
  version: 'v1',
  resource: name,
  kind,
  namespaced,
  shortNames: [],
  verbs: ['get', 'list'],
});
const RESOURCES = [resource('configmaps', 'ConfigMap', true), resource('namespaces', 'Namespace', false)];

/** A cluster that serves configmaps in pages of `limit`, and expires the continue token once. */
class ScriptedCluster implements Cluster {
  expiredOnce = false;
  constructor(private readonly configmaps: Record<string, unknown>[]) {}
  async serverVersion() {
    return { gitVersion: 'v1.34.0', major: '1', minor: '34' };
  }
  async discover() {
    return { resources: RESOURCES, unavailable: [] };
  }
  async listPage(options: {
    resource: ApiResource;
    limit: number;
    continueToken?: string;
  }): Promise<ListPage> {
    if (options.resource.resource === 'namespaces') {
      return { items: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } }] };
    }
    const start = options.continueToken ? Number(options.continueToken) : 0;
    if (start > 0 && !this.expiredOnce) {
      this.expiredOnce = true;
      throw new ListExpired('configmaps');
    }
    const items = this.configmaps.slice(start, start + options.limit);
    const next = start + options.limit;
    return next < this.configmaps.length ? { items, continueToken: String(next) } : { items };
  }
}

class RecordingQueue implements WorkQueue {
  readonly messages: ItemBlockMessage[] = [];
  readonly bodies: string[] = [];
  async send(messages: readonly string[]): Promise<void> {
    for (const m of messages) {
      this.bodies.push(m);
      this.messages.push(parseItemBlockMessage(m));
    }
  }
}

const configmap = (i: number, size = 10) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: `cm-${i}`, namespace: 'a' },
  data: { v: 'x'.repeat(size) },
});

async function setUp(configmaps: Record<string, unknown>[]) {
  const store = new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'collect-')));
  const run = {
    name: 'b',
    cluster: 'c',
    runId: 'r1',
    startedAt: '2026-01-01T00:00:00.000Z',
    expiration: '2026-02-01T00:00:00.000Z',
    itemBlocksTimeoutSeconds: 60,
  };
  await store.put(
    backupWorkKeys(run).request,
    JSON.stringify({ cluster: 'c', backup: { metadata: { name: 'b' }, spec: {} } }),
  );
  return {
    store,
    run,
    cluster: new ScriptedCluster(configmaps),
    queue: new RecordingQueue(),
    callbacks: new LocalTaskCallbacks(),
  };
}

describe('CollectItems', () => {
  it('restarts a listing whose continue token expired, without repeating items', async () => {
    const { store, run, cluster, queue, callbacks } = await setUp(
      Array.from({ length: 7 }, (_, i) => configmap(i)),
    );
    const summary = await collectItems(
      { run, taskToken: 't' },
      { cluster, store, queue, callbacks, clock: { now: () => new Date() }, pageSize: 3 },
    );
    expect(cluster.expiredOnce).toBe(true);
    const names = queue.messages.flatMap((m) =>
      m.blocks.flatMap((b) => ('items' in b ? b.items.map((i) => i.ref.name) : [])),
    );
    expect(names.filter((n) => n.startsWith('cm-')).sort()).toEqual(
      Array.from({ length: 7 }, (_, i) => `cm-${i}`).sort(),
    );
    expect(names).toContain('a');
    expect(summary).toMatchObject({ items: 8, blocks: 8 });
    const log = await store.get(backupWorkKeys(run).collectLog);
    expect(Buffer.from(log ?? []).toString()).toContain('list expired, restarting');
  });

  it('puts a block too large for a message into the store and sends its key', async () => {
    const { store, run, cluster, queue, callbacks } = await setUp([configmap(1, 5_000), configmap(2, 10)]);
    await collectItems(
      { run, taskToken: 't' },
      { cluster, store, queue, callbacks, clock: { now: () => new Date() }, maxMessageBytes: 2_000 },
    );
    const blocks = queue.messages.flatMap((m) => m.blocks);
    const offloaded = blocks.filter((b) => 'itemsKey' in b);
    expect(offloaded).toHaveLength(1);
    const key = offloaded[0] && 'itemsKey' in offloaded[0] ? offloaded[0].itemsKey : '';
    const stored = JSON.parse(Buffer.from((await store.get(key)) ?? []).toString()) as {
      ref: { name: string };
    }[];
    expect(stored.map((i) => i.ref.name)).toEqual(['cm-1']);
    for (const body of queue.bodies) expect(Buffer.byteLength(body)).toBeLessThanOrEqual(2_000);
  });
});
