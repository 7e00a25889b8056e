/**
 * Restores that fan out: a phase of several chunks is restored by several RestorePhase
 * invocations running at once (the same inner Map as in AWS, run by the local runtime with
 * small chunks), two restores of one backup run at once into one cluster, and a chunk retried
 * after its first attempt wrote everything reports the same outcome without counting twice.
 */
import { gunzipSync } from 'node:zlib';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ChunkRestored, runLocalRestore } from '../../../cli/local/restore-runtime.js';
import { comparable } from '../../../functions/restore-phase/compare.js';
import type { PhaseOutcome } from '../../../functions/restore-phase/restore-phase.js';
import { KubernetesCluster } from '../../../shared/adapters/kubernetes-cluster.js';
import type { LocalDirectoryStore } from '../../../shared/adapters/local-directory-store.js';
import { RetryableError } from '../../../shared/domain/errors.js';
import { prepareForRestore } from '../../../shared/domain/restore/item.js';
import { parseEntryName } from '../../../shared/domain/storage/archive-entry.js';
import { backupKeys, restoreKeys } from '../../../shared/domain/storage/keys.js';
import type { ObjectStore, PutOptions } from '../../../shared/ports/object-store.js';
import { backup, backupRequest, tempStore } from '../backup/support.js';
import { readArchive } from '../support/archive.js';
import { kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import { subset } from '../support/subset.js';

const CHUNK_SIZE = 5;
const CONFIGMAPS = 42;
const SECRETS = 8;

interface RestoreTotals {
  phase: string;
  items: number;
  created: number;
  updated: number;
  skipped: number;
  failed: number;
}

/** The most RestorePhase invocations of one phase that were running at the same moment. */
function mostAtOnce(chunks: readonly ChunkRestored[]): number {
  const edges = chunks.flatMap((c) => [
    { at: c.startedMs, step: 1 },
    { at: c.finishedMs, step: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.step - b.step);
  let running = 0;
  let most = 0;
  for (const e of edges) {
    running += e.step;
    most = Math.max(most, running);
  }
  return most;
}

/** A directory store whose first write of one outcome key succeeds and then fails as a throttled call would. */
class FailsAfterFirstOutcome implements ObjectStore {
  readonly writes: { key: string; body: Uint8Array | string }[] = [];
  private target: string | undefined;

  constructor(
    private readonly inner: ObjectStore,
    private readonly matches: (key: string) => boolean,
  ) {}

  get location(): string {
    return this.inner.location;
  }

  async put(key: string, body: Uint8Array | string, options?: PutOptions): Promise<void> {
    await this.inner.put(key, body, options);
    if (!this.matches(key)) return;
    this.writes.push({ key, body });
    if (this.target === undefined) {
      this.target = key;
      throw new RetryableError(`injected: the response to writing ${key} was lost`);
    }
  }

  putStream(key: string, body: AsyncIterable<Uint8Array>, options?: PutOptions): Promise<void> {
    return this.inner.putStream(key, body, options);
  }
  get(key: string): Promise<Uint8Array | undefined> {
    return this.inner.get(key);
  }
  getStream(key: string): Promise<AsyncIterable<Uint8Array> | undefined> {
    return this.inner.getStream(key);
  }
  exists(key: string): Promise<boolean> {
    return this.inner.exists(key);
  }
  list(prefix: string): Promise<string[]> {
    return this.inner.list(prefix);
  }
  delete(key: string): Promise<void> {
    return this.inner.delete(key);
  }
}

describe('restores that fan out over RestorePhase invocations', () => {
  let kc: KubeConfig;
  let store: LocalDirectoryStore;
  let source: string;
  let backupName: string;
  let originals: { gr: string; object: Record<string, unknown> }[];

  beforeAll(async () => {
    kc = kubeConfigFor(testEnv().clusters.source);
    const core = kc.makeApiClient(CoreV1Api);
    source = uniqueName('fan');
    await core.createNamespace({ body: { metadata: { name: source } } });
    for (let i = 0; i < CONFIGMAPS; i++)
      await core.createNamespacedConfigMap({
        namespace: source,
        body: {
          metadata: { name: `c-${i}`, labels: { n: String(i) } },
          data: { i: String(i), x: 'y'.repeat(i) },
        },
      });
    for (let i = 0; i < SECRETS; i++)
      await core.createNamespacedSecret({
        namespace: source,
        body: { metadata: { name: `s-${i}` }, stringData: { password: `p-${i}` } },
      });
    store = await tempStore();
    backupName = uniqueName('fan-backup');
    const made = await backup({
      kc,
      store,
      request: backupRequest(backupName, {
        includedNamespaces: [source],
        includedResources: ['configmaps', 'secrets'],
      }),
    });
    expect(made).toMatchObject({ ok: true, output: { phase: 'Completed' } });
    const archive = await readArchive(store, backupKeys(backupName).contents);
    originals = archive.names.flatMap((name) => {
      const entry = parseEntryName(name);
      if (entry.kind !== 'item' || entry.version) return [];
      return [
        {
          gr: entry.groupResource,
          object: JSON.parse(archive.contents.get(name) ?? '{}') as Record<string, unknown>,
        },
      ];
    });
    expect(originals.filter((o) => o.gr === 'configmaps').length).toBeGreaterThanOrEqual(CONFIGMAPS);
    expect(originals.filter((o) => o.gr === 'secrets').length).toBe(SECRETS);
    // Velero backs up the namespace of included items whatever the resource filter.
    expect(originals.filter((o) => o.gr === 'namespaces')).toHaveLength(1);
  });

  /** Every backed-up object that is not in the mapped namespace, or differs there, by name. */
  async function notRestored(target: string): Promise<string[]> {
    const cluster = new KubernetesCluster(kc);
    const problems: string[] = [];
    for (const { gr, object } of originals) {
      const prepared = prepareForRestore(object, {
        groupResource: gr,
        backupName,
        restoreName: 'any',
        namespaceMapping: { [source]: target },
      });
      const name = String((object.metadata as { name?: unknown }).name);
      const want = comparable(prepared);
      // The apiserver sets this label to the namespace's own name, the mapped one.
      if (gr === 'namespaces')
        (want.metadata as { labels: Record<string, string> }).labels['kubernetes.io/metadata.name'] = target;
      const live = await cluster.read({ resource: gr, object: prepared });
      if (!live) problems.push(`${gr}/${name} missing`);
      else if (!subset(want, comparable(live))) problems.push(`${gr}/${name} differs`);
      // Independently of how a restore prepares objects: the payload is the backed-up one.
      else if (JSON.stringify(live.data) !== JSON.stringify(object.data)) problems.push(`${gr}/${name} data`);
    }
    return problems;
  }

  async function restoreInto(options: {
    target: string;
    name?: string;
    store?: ObjectStore;
    onChunk?: (c: ChunkRestored) => void;
  }): Promise<RestoreTotals> {
    return (await runLocalRestore(
      {
        cluster: 'source',
        restore: {
          metadata: { name: options.name ?? uniqueName('fan-restore') },
          spec: { backupName, namespaceMapping: { [source]: options.target } },
        },
      },
      {
        cluster: new KubernetesCluster(kc),
        store: options.store ?? store,
        chunkSize: CHUNK_SIZE,
        ...(options.onChunk ? { onChunk: options.onChunk } : {}),
      },
    )) as unknown as RestoreTotals;
  }

  it('restores a phase of several chunks by several RestorePhase invocations at once, every item back', async () => {
    const target = `${source}-a`;
    const chunks: ChunkRestored[] = [];
    const result = await restoreInto({ target, onChunk: (c) => chunks.push(c) });

    expect(result).toMatchObject({ phase: 'Completed', failed: 0 });
    expect(result.items).toBe(originals.length);
    const configmaps = chunks.filter((c) => c.groupResource === 'configmaps');
    const expected = Math.ceil(originals.filter((o) => o.gr === 'configmaps').length / CHUNK_SIZE);
    expect(configmaps.map((c) => c.chunk).sort((a, b) => a - b)).toEqual(
      Array.from({ length: expected }, (_, i) => i),
    );
    expect(mostAtOnce(configmaps)).toBeGreaterThan(1);
    expect(mostAtOnce(configmaps)).toBeLessThanOrEqual(10);
    expect(chunks.filter((c) => c.groupResource === 'secrets')).toHaveLength(Math.ceil(SECRETS / CHUNK_SIZE));
    // Phases one after another: the namespace before its contents.
    const namespaces = chunks.find((c) => c.groupResource === 'namespaces');
    expect(namespaces).toBeDefined();
    for (const c of chunks.filter((x) => x.groupResource !== 'namespaces'))
      expect(c.startedMs).toBeGreaterThanOrEqual(namespaces?.finishedMs ?? Number.POSITIVE_INFINITY);
    const counted = chunks.reduce((n, c) => n + c.totals.created + c.totals.skipped + c.totals.updated, 0);
    expect(counted).toBe(result.items);
    expect(await notRestored(target)).toEqual([]);
  });

  it('runs two restores of one backup into one cluster at once, each mapped namespace whole', async () => {
    const [first, second] = [`${source}-b1`, `${source}-b2`];
    const results = await Promise.all([restoreInto({ target: first }), restoreInto({ target: second })]);

    for (const r of results) expect(r).toMatchObject({ phase: 'Completed', failed: 0, updated: 0 });
    expect(results[0]?.items).toBe(originals.length);
    expect(results[1]?.items).toBe(originals.length);
    expect(await notRestored(first)).toEqual([]);
    expect(await notRestored(second)).toEqual([]);
    // Each restore wrote its own namespace: its objects carry its own restore's label.
    const core = kc.makeApiClient(CoreV1Api);
    const labels = await Promise.all(
      [first, second].map(async (ns) =>
        (await core.listNamespacedConfigMap({ namespace: ns, labelSelector: 'n' })).items.map(
          (c) => c.metadata?.labels?.['velero.io/restore-name'],
        ),
      ),
    );
    expect(new Set(labels[0]).size).toBe(1);
    expect(new Set(labels[1]).size).toBe(1);
    expect(labels[0]?.[0]).not.toBe(labels[1]?.[0]);
  });

  it('counts each item of a retried chunk once, with the outcome its first attempt wrote', async () => {
    const target = `${source}-c`;
    const name = uniqueName('fan-retry');
    // The configmaps phase is the only one with a third chunk.
    const faulty = new FailsAfterFirstOutcome(store, (key) => /\/outcomes\/\d{3}-00002\.json\.gz$/.test(key));
    const result = await restoreInto({ target, name, store: faulty });

    expect(faulty.writes).toHaveLength(2);
    expect(faulty.writes[0]?.key).toBe(faulty.writes[1]?.key);
    const outcomes = (body: Uint8Array | string | undefined) =>
      (JSON.parse(gunzipSync(body ?? '').toString()) as PhaseOutcome).outcomes
        .map((o) => `${o.kind} ${o.namespace}/${o.name} ${o.result}`)
        .sort();
    const first = outcomes(faulty.writes[0]?.body);
    expect(first).toHaveLength(CHUNK_SIZE);
    expect(first.every((o) => o.endsWith(' created'))).toBe(true);
    expect(outcomes(faulty.writes[1]?.body)).toEqual(first);

    expect(result).toMatchObject({ phase: 'Completed', failed: 0, updated: 0 });
    expect(result.items).toBe(originals.length);
    const list = JSON.parse(
      gunzipSync((await store.get(restoreKeys(name).resourceList)) ?? new Uint8Array()).toString(),
    ) as Record<string, string[]>;
    const entries = Object.values(list).flat();
    expect(entries).toHaveLength(result.items);
    expect(new Set(entries).size).toBe(entries.length);
    expect(await notRestored(target)).toEqual([]);
  });
});
