/**
 * Data mover throughput (block mode) against plain S3 PUTs of the same bytes to the same endpoint
 * at the same concurrency, in one run on a moto server started for it (and stopped at the end).
 *
 * Before any timing: a volume image of N MiB (default 2048: 4,096 blocks of 512 KiB) in runs of
 * random data (~40%), distinct compressible JSON log lines (~30%), zeros (~15%: half written as
 * zeros, which EBS lists and the backup must read; half never written, which EBS does not list)
 * and duplicates of earlier blocks (~15%) is written into moto's EBS as a snapshot, and a second
 * snapshot on it with 1% of the volume's blocks changed. Then, timed one after the other:
 *   EBS read alone   GetSnapshotBlock of every listed block, as many at once as the backup reads;
 *   raw S3 PUT       the listed blocks' bytes as pack-sized objects, as many at once as the
 *                    repository writer uploads packs;
 *   full backup      a block-backup job into a repository on the same bucket;
 *   incremental      a block-backup job of the second snapshot against the full backup's manifest;
 *   restore          a block-restore job of the incremental into a new snapshot, verified
 *                    afterwards block by block (SHA-256) against the image.
 * The three jobs run as the Fargate task runs them (block-jobs.ts: the compiled entry, a process
 * each), so their CPU and peak RSS are the data mover's own, apart from this process's image.
 * Prints MiB/s, the ratios, blocks read, dedup and compression, and for each phase the CPU time
 * of the process doing it and of moto (one Python process serving both EBS and S3), the data
 * mover's peak RSS against its bound, the ceiling the machine's cores put on the ratio (from
 * that CPU), and the machine's load average (other work on the machine slows every phase).
 * Never asserts timings.
 *   npm run bench:data-mover -- [image MiB, 2048] [EBS calls in flight, 32] [raw PUTs in flight, 4]
 * The defaults are the data mover's own (its repository writer uploads 4 packs at once).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import pLimit from 'p-limit';
import { snapshotBlocksFor } from '../../shared/adapters/ebs-snapshot-blocks.js';
import { DEFAULT_PACK_TARGET_BYTES } from '../../shared/adapters/repository/format-object.js';
import { S3ObjectStore } from '../../shared/adapters/s3-object-store.js';
import { repositoryKeys } from '../../shared/domain/storage/keys.js';
import { EBS_BLOCK_SIZE } from '../../shared/ports/snapshot-blocks.js';
import { ensureTools } from '../env/ensure-tools.js';
import { startMoto } from '../env/moto.js';
import { stopPids } from '../env/processes.js';
import { hashOf, isZero, volumeHashes, writeSnapshot } from '../integration/support/snapshot-image.js';
import { blockJobs } from './block-jobs.js';
import { lifeboatBundle, type Measured } from './peer-runs.js';
import { cpuSecondsOf } from './proc.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const BLOCK = EBS_BLOCK_SIZE;
const BUCKET = 'lifeboat-bench';
const CREDENTIALS = { accessKeyId: 'testing', secretAccessKey: 'testing' };
/** What the data mover may hold at a 2 GiB image (issue 23), far below the Fargate task's memory. */
const RSS_BOUND_MIB = 512;

type Kind = 'random' | 'text' | 'zeros written' | 'never written' | 'duplicate';
const SHARES: readonly (readonly [Kind, number])[] = [
  ['random', 0.4],
  ['text', 0.3],
  ['zeros written', 0.075],
  ['never written', 0.075],
  ['duplicate', 0.15],
];

/** A small seeded generator (mulberry32): the same layout and text on every run. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const LEVELS = ['info', 'info', 'info', 'debug', 'warn', 'error'];
const RESOURCES = ['orders', 'users', 'carts', 'items', 'payments', 'sessions', 'invoices'];
const STATUSES = [200, 200, 200, 201, 204, 304, 400, 404, 500];

/** 512 KiB of application log as JSON lines: distinct, compressible as such logs are. */
function textBlock(next: () => number, blockIndex: number): Buffer {
  const out = Buffer.allocUnsafe(BLOCK);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
  let at = 0;
  for (let line = 0; at < BLOCK; line++) {
    const seconds = blockIndex * 60 + line;
    const time = new Date(Date.UTC(2026, 10, 1) + seconds * 1000 + Math.floor(next() * 1000)).toISOString();
    at += out.write(
      `{"ts":"${time}","level":"${pick(LEVELS)}","user":"u${Math.floor(next() * 50_000)}",` +
        `"method":"${next() < 0.7 ? 'GET' : 'POST'}","path":"/api/v1/${pick(RESOURCES)}/${Math.floor(next() * 1e6)}",` +
        `"status":${pick(STATUSES)},"ms":${(next() * 900).toFixed(1)},"req":"${Math.floor(next() * 2 ** 32)
          .toString(16)
          .padStart(8, '0')}"}\n`,
      at,
    );
  }
  return out;
}

/** The image: block index → content for every written block, in runs of one kind each. */
function benchImage(blocks: number): { image: Map<number, Uint8Array>; counts: Map<Kind, number> } {
  const next = generator(7);
  const image = new Map<number, Uint8Array>();
  const counts = new Map<Kind, number>(SHARES.map(([kind]) => [kind, 0]));
  const sources: number[] = [];
  const zeros = new Uint8Array(BLOCK);
  for (let index = 0; index < blocks; ) {
    const run = Math.min(blocks - index, 1 + Math.floor(next() * 32));
    // The kind furthest behind its share once this run is in: the mix matches SHARES.
    let kind: Kind = 'random';
    let behind = Number.NEGATIVE_INFINITY;
    for (const [k, share] of SHARES) {
      const lag = share * (index + run) - (counts.get(k) ?? 0);
      if (lag > behind) [kind, behind] = [k, lag];
    }
    for (let end = index + run; index < end; index++) {
      const here: Kind = kind === 'duplicate' && sources.length === 0 ? 'random' : kind;
      counts.set(here, (counts.get(here) ?? 0) + 1);
      if (here === 'random') image.set(index, randomBytes(BLOCK));
      else if (here === 'text') image.set(index, textBlock(next, index));
      else if (here === 'zeros written') image.set(index, zeros);
      else if (here === 'duplicate')
        image.set(index, image.get(sources[Math.floor(next() * sources.length)] ?? 0) as Uint8Array);
      if (here === 'random' || here === 'text') sources.push(index);
    }
  }
  return { image, counts };
}

/** 1% of the volume's blocks (at least one), anywhere in it: new random data or new log lines. */
function changesOf(blocks: number): Map<number, Uint8Array> {
  const next = generator(11);
  const count = Math.max(1, Math.round(blocks / 100));
  const changes = new Map<number, Uint8Array>();
  while (changes.size < count) {
    const index = Math.floor(next() * blocks);
    if (!changes.has(index))
      changes.set(index, changes.size % 2 === 0 ? randomBytes(BLOCK) : textBlock(next, index + blocks));
  }
  return changes;
}

/** moto's CPU seconds and resident memory, from /proc. */
function motoUsage(pid: number): { cpuSeconds: number; rssMiB: number; peakRssMiB: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (name: string): number => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
    return {
      cpuSeconds: cpuSecondsOf(pid),
      rssMiB: kib('VmRSS') / 1024,
      peakRssMiB: kib('VmHWM') / 1024,
    };
  } catch {
    return { cpuSeconds: Number.NaN, rssMiB: Number.NaN, peakRssMiB: Number.NaN };
  }
}

interface Phase {
  readonly name: string;
  readonly bytes: number;
  readonly seconds: number;
  /** Of the process doing the phase: this one, or the data mover's job. */
  readonly ourCpuSeconds: number;
  readonly motoCpuSeconds: number;
  /** The data mover job's peak RSS (none for the phases this process does). */
  readonly peakRssMiB?: number;
}

const phases: Phase[] = [];

async function timed<T>(name: string, bytes: number, motoPid: number, fn: () => Promise<T>): Promise<T> {
  const ours = process.cpuUsage();
  const moto = motoUsage(motoPid).cpuSeconds;
  const start = performance.now();
  const value = await fn();
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(ours);
  const phase = {
    name,
    bytes,
    seconds,
    ourCpuSeconds: (used.user + used.system) / 1e6,
    motoCpuSeconds: motoUsage(motoPid).cpuSeconds - moto,
  };
  phases.push(phase);
  process.stderr.write(`${row(phase)}\n`);
  return value;
}

/** A data mover job as a phase: its own wall time, CPU and peak RSS, and moto's CPU meanwhile. */
async function timedJob<T>(
  name: string,
  bytes: number,
  motoPid: number,
  job: () => Promise<{ measured: Measured; result: T }>,
): Promise<T> {
  const moto = motoUsage(motoPid).cpuSeconds;
  const { measured, result } = await job();
  const phase = {
    name,
    bytes,
    seconds: measured.seconds,
    ourCpuSeconds: measured.cpuSeconds,
    motoCpuSeconds: motoUsage(motoPid).cpuSeconds - moto,
    peakRssMiB: measured.peakRssMiB,
  };
  phases.push(phase);
  process.stderr.write(`${row(phase)}\n`);
  return result;
}

const rate = (bytes: number, seconds: number): number => bytes / MiB / seconds;

function row(p: Phase): string {
  return [
    p.name.padEnd(34),
    `${(p.bytes / MiB).toFixed(0).padStart(6)} MiB`,
    `${p.seconds.toFixed(1).padStart(7)} s`,
    `${rate(p.bytes, p.seconds).toFixed(1).padStart(7)} MiB/s`,
    `CPU ours ${p.ourCpuSeconds.toFixed(1).padStart(6)} s`,
    `moto ${p.motoCpuSeconds.toFixed(1).padStart(6)} s`,
    ...(p.peakRssMiB === undefined ? [] : [`peak RSS ${p.peakRssMiB.toFixed(0).padStart(4)} MiB`]),
  ].join(' | ');
}

async function bucketBytes(s3: S3Client, prefix: string): Promise<{ objects: number; bytes: number }> {
  let objects = 0;
  let bytes = 0;
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) {
      objects++;
      bytes += o.Size ?? 0;
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return { objects, bytes };
}

/** The ratio the design asks of a full backup against the raw PUT (../shared/DESIGN.md §7). */
const TARGET = 0.8;

/**
 * What the machine's cores allow, from CPU measured in this run: a full backup must at least
 * read every listed block (as the "EBS read alone" phase did: its CPU, ours and moto's) and
 * upload what it stores (at the raw PUT's CPU per byte, ours and moto's). On `cores` cores that
 * takes at least their sum divided by the cores, however the work is spread: the ceiling on
 * the ratio of any backup of this image here, before hashing, compressing or encrypting. A
 * generous one: it lets moto (one Python process) and this event loop use every core.
 */
function cpuCeiling(options: {
  ebsRead: Phase;
  rawPut: Phase;
  backup: Phase;
  storedBytes: number;
  cores: number;
}): string {
  const { ebsRead, rawPut, backup, storedBytes, cores } = options;
  const cpu = (p: Phase): number => p.ourCpuSeconds + p.motoCpuSeconds;
  const floorCpu = cpu(ebsRead) + (cpu(rawPut) * storedBytes) / rawPut.bytes;
  const ceiling = rate(backup.bytes, floorCpu / cores) / rate(rawPut.bytes, rawPut.seconds);
  const allowed = (backup.bytes / MiB / (TARGET * rate(rawPut.bytes, rawPut.seconds))) * cores;
  return (
    `CPU on ${cores} cores: reading every listed block (as measured alone) and uploading the stored bytes (at the raw PUT's cost per byte) ` +
    `take ${floorCpu.toFixed(1)} CPU-s of this process and moto, so no backup that reads and writes so reaches a ratio above ${ceiling.toFixed(2)} here; ` +
    `at ${TARGET} the full backup could use ${allowed.toFixed(1)} CPU-s, it used ${cpu(backup).toFixed(1)}`
  );
}

const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

async function main(): Promise<void> {
  const [sizeMiB, BLOCK_CONCURRENCY, UPLOAD_CONCURRENCY] = [2048, 32, 4].map((fallback, i) =>
    Number(process.argv[2 + i] ?? fallback),
  ) as [number, number, number];
  if (![sizeMiB, BLOCK_CONCURRENCY, UPLOAD_CONCURRENCY].every((n) => Number.isInteger(n) && n >= 1)) {
    process.stderr.write(
      'usage: npm run bench:data-mover -- [image MiB, 2048] [EBS calls in flight, 32] [raw PUTs in flight, 4] (positive integers)\n',
    );
    process.exit(2);
  }
  const loadAtStart = load();
  const blocks = Math.floor((sizeMiB * MiB) / BLOCK);
  const volumeGiB = Math.ceil((blocks * BLOCK) / GiB);
  const tools = await ensureTools();
  const root = await mkdtemp(join(tmpdir(), 'lifeboat-dmbench-'));
  const aws = await startMoto({ rootDir: root, tools });
  try {
    const main = await lifeboatBundle({ dir: join(root, 'data-mover') });
    // moto (werkzeug) closes the connection after every answer, so each request connects anew;
    // by name, each also resolved `localhost` first (8% of this process's CPU in a profile). AWS
    // keeps connections alive. The baselines and the data mover use the same endpoint.
    const endpoint = aws.endpoint.replace('//localhost:', '//127.0.0.1:');
    const blocksApi = snapshotBlocksFor({ region: aws.region, endpoint, credentials: CREDENTIALS });
    // As the data mover's S3 client (shared/adapters/data-mover-adapters.ts): a socket per upload.
    const s3 = new S3Client({
      region: aws.region,
      endpoint,
      credentials: CREDENTIALS,
      forcePathStyle: true,
      maxAttempts: 8,
      requestHandler: { httpAgent: { maxSockets: 64 }, httpsAgent: { maxSockets: 64 } },
    });
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    const store = new S3ObjectStore({ client: s3, bucket: BUCKET });
    const jobs = blockJobs({
      main,
      endpoint,
      region: aws.region,
      bucket: BUCKET,
      work: root,
      concurrency: BLOCK_CONCURRENCY,
    });

    // --- Seeding (not timed) ---
    const generated = performance.now();
    const { image, counts } = benchImage(blocks);
    const changes = changesOf(blocks);
    process.stderr.write(
      `image: ${blocks} blocks (${[...counts].map(([k, n]) => `${k} ${n}`).join(', ')}) generated in ${((performance.now() - generated) / 1000).toFixed(1)} s\n`,
    );
    const listed = [...image.keys()].sort((a, b) => a - b);
    const listedBytes = listed.length * BLOCK;
    const seeding = performance.now();
    const fullSnapshot = await writeSnapshot(blocksApi, image, undefined, volumeGiB);
    const seedSeconds = (performance.now() - seeding) / 1000;
    const changedSnapshot = await writeSnapshot(blocksApi, changes, fullSnapshot, volumeGiB);
    process.stderr.write(
      `seeded ${fullSnapshot} (${volumeGiB} GiB volume, ${listed.length} blocks written) at ${rate(listedBytes, seedSeconds).toFixed(1)} MiB/s (PutSnapshotBlock, 16 at once); ${changedSnapshot} with ${changes.size} blocks changed\n`,
    );

    // --- Timed phases ---
    await timed('EBS read alone (GetSnapshotBlock)', listedBytes, aws.pid, async () => {
      const limit = pLimit(BLOCK_CONCURRENCY);
      const reads: Promise<void>[] = [];
      for await (const page of blocksApi.listSnapshotBlocks({ snapshotId: fullSnapshot }))
        for (const b of page.blocks)
          reads.push(
            limit(async () => {
              await blocksApi.getSnapshotBlock({
                snapshotId: fullSnapshot,
                blockIndex: b.index,
                blockToken: b.token,
              });
            }),
          );
      await Promise.all(reads);
    });

    const perObject = Math.max(1, Math.floor(DEFAULT_PACK_TARGET_BYTES / BLOCK));
    await timed('raw S3 PUT (pack-sized objects)', listedBytes, aws.pid, async () => {
      const limit = pLimit(UPLOAD_CONCURRENCY);
      const puts: Promise<void>[] = [];
      for (let i = 0; i < listed.length; i += perObject)
        puts.push(
          limit(() =>
            store.put(
              `bench-raw/${i}`,
              Buffer.concat(listed.slice(i, i + perObject).map((index) => image.get(index) as Uint8Array)),
            ),
          ),
        );
      await Promise.all(puts);
    });
    const raw = await bucketBytes(s3, 'bench-raw/');
    for (let i = 0; i < listed.length; i += perObject) await store.delete(`bench-raw/${i}`);

    const full = await timedJob('full backup', listedBytes, aws.pid, () =>
      jobs.backup({ snapshotId: fullSnapshot, manifestId: 'bench-full' }),
    );

    const incremental = await timedJob('incremental backup (1% changed)', changes.size * BLOCK, aws.pid, () =>
      jobs.backup({
        snapshotId: changedSnapshot,
        manifestId: 'bench-incremental',
        parentManifestId: 'bench-full',
      }),
    );

    // What the restore must bring back: the image with the changes, zero blocks left out.
    for (const [index, data] of changes) image.set(index, data);
    const expected = new Map<number, string>();
    for (const [index, data] of image) if (!isZero(data)) expected.set(index, hashOf(data));
    image.clear();
    const restoreBytes = expected.size * BLOCK;
    const restored = await timedJob('restore (into a new snapshot)', restoreBytes, aws.pid, () =>
      jobs.restore({ manifestId: 'bench-incremental', jobId: `bench-restore-${Date.now()}` }),
    );
    const actual = await volumeHashes(blocksApi, restored.snapshotId);
    const mismatched = [...expected].filter(([index, hash]) => actual.get(index) !== hash).length;
    if (mismatched > 0 || actual.size !== expected.size)
      throw new Error(
        `restored snapshot ${restored.snapshotId}: ${mismatched} of ${expected.size} blocks differ, ${actual.size} blocks hold data`,
      );

    // --- Figures ---
    const stored = await bucketBytes(s3, repositoryKeys.dir);
    const [ebsRead, rawPut, backup, incr, restore] = phases as [Phase, Phase, Phase, Phase, Phase];
    const f = full.stats;
    const moto = motoUsage(aws.pid);
    const lines = [
      `data mover benchmark: ${sizeMiB} MiB image, ${blocks} blocks of 512 KiB in a ${volumeGiB} GiB volume; moto at ${endpoint}`,
      `content: ${[...counts].map(([k, n]) => `${k} ${n}`).join(', ')}; ${listed.length} blocks listed by EBS (${(listedBytes / MiB).toFixed(0)} MiB)`,
      `concurrency: ${BLOCK_CONCURRENCY} EBS calls; raw PUT ${UPLOAD_CONCURRENCY} S3 uploads of ${perObject * 0.5} MiB (${raw.objects} objects), the data mover's writer 4 of its packs`,
      ...phases.map(row),
      `ratio full backup / raw S3 PUT: ${(rate(backup.bytes, backup.seconds) / rate(rawPut.bytes, rawPut.seconds)).toFixed(2)} (target >= 0.8)`,
      `ratio full backup / (EBS read alone + raw S3 PUT, one after the other): ${((ebsRead.seconds + rawPut.seconds) / backup.seconds).toFixed(2)}`,
      cpuCeiling({ ebsRead, rawPut, backup, storedBytes: f.storedBytes, cores: availableParallelism() }),
      `full backup: ${full.run.blocksRead} blocks read, ${(f.totalBytes / MiB).toFixed(0)} MiB of non-zero blocks, ${(f.rawBytesStored / MiB).toFixed(0)} MiB unique, ${(f.storedBytes / MiB).toFixed(0)} MiB stored; ${f.blobsDeduplicated} blobs deduplicated`,
      `dedup ratio (non-zero / unique): ${(f.totalBytes / f.rawBytesStored).toFixed(2)}; compression ratio (unique / stored): ${(f.rawBytesStored / f.storedBytes).toFixed(2)}; overall (listed / repository in S3): ${(listedBytes / stored.bytes).toFixed(2)}`,
      `repository in S3 after both backups: ${stored.objects} objects, ${(stored.bytes / MiB).toFixed(0)} MiB`,
      `incremental: ${incremental.run.blocksRead} of ${listed.length} listed blocks read (${((100 * incremental.run.blocksRead) / listed.length).toFixed(2)}%; ${((100 * incremental.run.blocksRead) / blocks).toFixed(2)}% of the volume's ${blocks}; target <= 2%), ${incr.seconds.toFixed(1)} s`,
      `restore: ${restored.blocksWritten} blocks written, ${rate(restore.bytes, restore.seconds).toFixed(1)} MiB/s; verified: ${actual.size} blocks identical (SHA-256); for reference, seeding wrote ${rate(listedBytes, seedSeconds).toFixed(1)} MiB/s (PutSnapshotBlock alone, 16 at once)`,
      `load average (1, 5, 15 min) at start ${loadAtStart}, at the end ${load()} (2 cores: other work slows every phase)`,
      `data mover peak RSS (each job its own process, as the Fargate task): full backup ${backup.peakRssMiB?.toFixed(0)} MiB, incremental ${incr.peakRssMiB?.toFixed(0)} MiB, restore ${restore.peakRssMiB?.toFixed(0)} MiB; bound ${RSS_BOUND_MIB} MiB: ${Math.max(backup.peakRssMiB ?? 0, incr.peakRssMiB ?? 0, restore.peakRssMiB ?? 0) <= RSS_BOUND_MIB ? 'within' : 'OVER'}`,
      `moto RSS at the end ${moto.rssMiB.toFixed(0)} MiB, peak ${moto.peakRssMiB.toFixed(0)} MiB; this process (which holds the image) peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await stopPids([aws.pid]);
    await rm(root, { recursive: true, force: true });
  }
}

await main();
