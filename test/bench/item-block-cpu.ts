/**
 * CPU of the ItemBlock worker per item, without a cluster: N ConfigMap-like objects (~1.2 KB of
 * JSON with managedFields, as the apiserver serves them) packed into ~200 KB messages as
 * CollectItems packs them, each message parsed and backed up as the local runtime's worker
 * thread does: into a local directory store, and again into memory (the worker's own CPU without
 * the kernel's file creation), with a digest of the objects written (equal digests: equal bytes).
 * Prints, over several rounds, the median CPU (and user CPU) and wall time per item of the whole
 * path and of its parts (parse, log text, tar, store puts); never asserts.
 *   npx tsx test/bench/item-block-cpu.ts [items] [rounds] [worker: the whole path only]
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backupItemBlocks } from '../../functions/backup-item-block/backup-item-block.js';
import { LocalDirectoryStore } from '../../shared/adapters/local-directory-store.js';
import { tarOf } from '../../shared/adapters/tar-archive.js';
import type { ItemBlockMessage } from '../../shared/contracts/backup-run.js';
import {
  itemBlockMessageBody,
  parseItemBlockMessage,
  wireBlock,
} from '../../shared/contracts/item-block-wire.js';
import { type LogEvent, logTextOf } from '../../shared/domain/storage/log.js';
import { entryNames } from '../../shared/domain/storage/tarball-layout.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';

const items = Number(process.argv[2] ?? 14_000);
const rounds = Number(process.argv[3] ?? 5);
const MAX_MESSAGE_BYTES = 200_000;
const startedAt = '2024-05-01T10:00:00Z';

function configMap(ns: string, name: string, i: number): string {
  return JSON.stringify({
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: {
      name,
      namespace: ns,
      uid: `6f1c2a3b-${String(i).padStart(4, '0')}-4c5d-8e9f-0a1b2c3d4e5f`,
      resourceVersion: String(100_000 + i),
      creationTimestamp: '2024-05-01T09:00:00Z',
      labels: { bench: 'yes' },
      managedFields: [
        {
          manager: 'kubectl-client-side-apply',
          operation: 'Update',
          apiVersion: 'v1',
          time: '2024-05-01T09:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:data': { '.': {}, 'f:key': {} },
            'f:metadata': { 'f:labels': { '.': {}, 'f:bench': {} } },
          },
        },
      ],
    },
    data: { key: 'x'.repeat(600) },
  });
}

function messageBodies(runId: string): string[] {
  const backup = { name: 'bench', runId, startedAt };
  const bodies: string[] = [];
  let blocks: ItemBlockMessage['blocks'] = [];
  let bytes = 0;
  const pack = (): void => {
    bodies.push(
      itemBlockMessageBody({ backup, messageId: `a1-${String(bodies.length).padStart(6, '0')}`, blocks }),
    );
    blocks = [];
    bytes = 0;
  };
  for (let i = 0; i < items; i++) {
    const ns = `bench-${i % 20}`;
    const name = `cm-${i}`;
    const item = {
      ref: { group: '', version: 'v1', resource: 'configmaps', namespace: ns, name },
      kind: 'ConfigMap',
      preferred: true,
      json: configMap(ns, name, i),
    };
    const block = { id: `b${i}`, items: [item] };
    const size = wireBlock(block).bytes;
    if (bytes + size > MAX_MESSAGE_BYTES - 1_000) pack();
    blocks.push(block);
    bytes += size;
  }
  if (blocks.length > 0) pack();
  return bodies;
}

interface Sample {
  ms: number;
  cpuMs: number;
  userMs: number;
}

async function measure(run: () => Promise<void>): Promise<Sample> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  await run();
  const used = process.cpuUsage(cpu);
  return {
    ms: performance.now() - started,
    cpuMs: (used.user + used.system) / 1000,
    userMs: used.user / 1000,
  };
}

const noCallbacks = { succeed: async () => undefined, fail: async () => undefined };
const clockMs = Date.parse('2024-05-01T10:00:01Z');
const clock = { now: () => new Date(clockMs) };

/** Objects in memory: the worker's CPU without the file system's (creating files costs the kernel). */
class MemoryStore implements ObjectStore {
  readonly location = 'memory:';
  readonly objects = new Map<string, Buffer>();
  async put(key: string, body: Uint8Array | string): Promise<void> {
    this.objects.set(key, Buffer.from(body));
  }
  async putStream(): Promise<void> {
    throw new Error('not used by the worker');
  }
  async get(key: string): Promise<Uint8Array | undefined> {
    return this.objects.get(key);
  }
  async getStream(): Promise<undefined> {
    throw new Error('not used by the worker');
  }
  async exists(key: string): Promise<boolean> {
    return this.objects.has(key);
  }
  async list(prefix: string): Promise<string[]> {
    return [...this.objects.keys()].filter((k) => k.startsWith(prefix)).sort();
  }
  async delete(key: string): Promise<void> {
    this.objects.delete(key);
  }
}

function backUpAll(bodies: readonly string[], store: ObjectStore): Promise<Sample> {
  return measure(async () => {
    for (const body of bodies)
      await backupItemBlocks(parseItemBlockMessage(body), {
        store,
        callbacks: noCallbacks,
        clock,
        podExecFor: async () => {
          throw new Error('no hooks in this benchmark');
        },
      });
  });
}

async function wholeWorker(bodies: readonly string[]): Promise<Sample> {
  const dir = await mkdtemp(join(tmpdir(), 'lifeboat-item-block-cpu-'));
  try {
    return await backUpAll(bodies, new LocalDirectoryStore(dir));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The worker into memory, and a digest of every object it wrote (the same for the same code's output). */
async function inMemory(bodies: readonly string[]): Promise<{ sample: Sample; digest: string }> {
  const store = new MemoryStore();
  const sample = await backUpAll(bodies, store);
  const hash = createHash('sha256');
  for (const key of [...store.objects.keys()].sort()) {
    hash.update(`${key}\0`);
    const body = store.objects.get(key) as Buffer;
    // Gzip members: the bytes inside them and the compressed bytes both count.
    hash.update(body);
  }
  return { sample, digest: hash.digest('hex').slice(0, 16) };
}

async function parts(bodies: readonly string[]): Promise<Record<string, Sample>> {
  const messages = bodies.map((b) => parseItemBlockMessage(b));
  const parse = await measure(async () => {
    for (const body of bodies) parseItemBlockMessage(body);
  });
  const logs: LogEvent[][] = messages.map((m) =>
    m.blocks.flatMap((b) =>
      'items' in b
        ? b.items.map((i) => ({
            time: '2024-05-01T10:00:01.000Z',
            level: 'info' as const,
            msg: 'Backed up item',
            fields: {
              backup: 'bench',
              name: i.ref.name,
              namespace: i.ref.namespace,
              resource: i.ref.resource,
            },
          }))
        : [],
    ),
  );
  const log = await measure(async () => {
    for (const events of logs) logTextOf(events);
  });
  const entries = messages.map((m) =>
    m.blocks.flatMap((b) =>
      'items' in b
        ? b.items.flatMap((i) =>
            entryNames(i.ref, { preferred: i.preferred }).map((name) => ({ name, body: i.json })),
          )
        : [],
    ),
  );
  const tar = await measure(async () => {
    for (const list of entries) await tarOf(list, { mtime: new Date(startedAt) });
  });
  const dir = await mkdtemp(join(tmpdir(), 'lifeboat-item-block-cpu-'));
  const store = new LocalDirectoryStore(dir);
  const payload = Buffer.alloc(40_000, 1);
  const put = await measure(async () => {
    for (let i = 0; i < bodies.length; i++) {
      await store.put(`backups-work/bench/r/fragments/a1-${i}.tar.gz`, payload);
      await store.put(`backups-work/bench/r/results/a1-${i}.json.gz`, payload);
    }
  });
  await rm(dir, { recursive: true, force: true });
  return { parse, log, tar, put };
}

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const perItem = (ms: number): string => `${((ms * 1000) / items).toFixed(1)} µs`;

const bodies = messageBodies('r1');
console.log(`${items} items in ${bodies.length} messages`);
const samples: Record<string, Sample[]> = {};
const digests = new Set<string>();
for (let round = 0; round < rounds; round++) {
  const whole = await wholeWorker(bodies);
  const memory = await inMemory(bodies);
  digests.add(memory.digest);
  const partSamples = process.argv[4] === 'worker' ? {} : await parts(bodies);
  for (const [name, sample] of Object.entries({ worker: whole, 'in mem': memory.sample, ...partSamples })) {
    samples[name] = [...(samples[name] ?? []), sample];
  }
}
console.log(`objects written: sha256 ${[...digests].join(', ')}`);
for (const [name, list] of Object.entries(samples)) {
  const cpu = median(list.map((s) => s.cpuMs));
  const ms = median(list.map((s) => s.ms));
  const user = median(list.map((s) => s.userMs));
  console.log(
    `${name.padEnd(7)} cpu ${cpu.toFixed(0).padStart(5)} ms (${perItem(cpu)}/item, user ${perItem(user)})  wall ${ms.toFixed(0).padStart(5)} ms (${perItem(ms)}/item)  [cpu ${list.map((s) => s.cpuMs.toFixed(0)).join(' ')}]`,
  );
}
