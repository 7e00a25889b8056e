/**
 * File-mode data mover against what its users would pick instead, side by side on one machine and
 * one moto endpoint: Lifeboat (its entry point, compiled as the Fargate image is), Kopia 0.23.1 with
 * zstd and with no compression (Velero's setting), and restic 0.19.1, each into its own bucket.
 * Per round, with the tools' order rotated from round to round: the data set is written
 * (test/bench/peer-data.ts), each tool backs it up (full), again (unchanged), then 1% of the files
 * change and each backs it up (changed) and restores it, and every restore is verified against the
 * source (SHA-256, modes, owners, mtimes to the nanosecond, sparseness). Prints every run, medians,
 * MB/s, CPU-s of the tool and of moto, peak RSS, the bucket's bytes, CPU-s per GB, and the ratios
 * Lifeboat ÷ each peer, with the load average, and Lifeboat's peak RSS against the Fargate task's memory. Never asserts timings.
 *   npm run bench:peers -- [scale, 1] [rounds, 3]
 * LIFEBOAT_BENCH_MOVER=/path/main.mjs measures another build of the data mover (a before/after pair);
 * LIFEBOAT_BENCH_BASELINE=/path/main.mjs measures one more, as `lifeboat-base`, in the same rounds.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  DeleteObjectsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { DATA_MOVER_MEMORY_MIB } from '../../infra/constructs/data-mover.js';
import { ensureTools } from '../env/ensure-tools.js';
import { startMoto } from '../env/moto.js';
import { stopPids } from '../env/processes.js';
import { ensureSetTimes } from '../env/set-times.js';
import { changeFiles, shapeAt, writeDataSet } from './peer-data.js';
import {
  CREDENTIALS,
  type Endpoint,
  kopiaTool,
  lifeboatBundle,
  lifeboatTool,
  type Measured,
  resticTool,
  type Tool,
} from './peer-runs.js';
import { ensurePeer } from './peer-tools.js';
import { cpuSecondsOf } from './proc.js';
import { compareTrees } from './tree-compare.js';

const PHASES = ['full', 'unchanged', 'changed', 'restore'] as const;
type Phase = (typeof PHASES)[number];

interface Result extends Measured {
  readonly tool: string;
  readonly phase: Phase;
  readonly round: number;
  readonly motoCpuSeconds: number;
  readonly bucketBytes: number;
  readonly problems: readonly string[];
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};

async function bucketBytes(s3: S3Client, bucket: string): Promise<number> {
  let bytes = 0;
  let token: string | undefined;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
    for (const o of page.Contents ?? []) bytes += o.Size ?? 0;
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return bytes;
}

/** Empties a bucket (moto keeps everything in memory). */
async function emptyBucket(s3: S3Client, bucket: string): Promise<void> {
  for (;;) {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key }] : []));
    if (keys.length === 0) return;
    await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys } }));
  }
}

function line(r: Result, dataBytes: number): string {
  const mbps = dataBytes / 1e6 / r.seconds;
  return (
    `  round ${r.round} ${r.tool.padEnd(10)} ${r.phase.padEnd(9)} ${r.seconds.toFixed(2).padStart(7)} s ` +
    `${mbps.toFixed(1).padStart(7)} MB/s  CPU ${r.cpuSeconds.toFixed(2).padStart(6)} s  moto ${r.motoCpuSeconds.toFixed(1).padStart(6)} s  ` +
    `RSS ${r.peakRssMiB.toFixed(0).padStart(5)} MiB  bucket ${(r.bucketBytes / 1e6).toFixed(1)} MB` +
    (r.problems.length ? `  RESTORE DIFFERS: ${r.problems.join('; ')}` : '')
  );
}

async function phaseRun(options: {
  tool: Tool;
  phase: Phase;
  round: number;
  motoPid: number;
  s3: S3Client;
  act: () => Promise<{ measured: Measured; problems?: readonly string[] }>;
}): Promise<Result> {
  const moto = cpuSecondsOf(options.motoPid);
  const { measured, problems = [] } = await options.act();
  return {
    ...measured,
    tool: options.tool.name,
    phase: options.phase,
    round: options.round,
    motoCpuSeconds: cpuSecondsOf(options.motoPid) - moto,
    bucketBytes: await bucketBytes(options.s3, options.tool.bucket),
    problems,
  };
}

/** One round: every tool's full and unchanged backups of the data set, then changed and restore. */
async function round(options: {
  round: number;
  tools: readonly Tool[];
  data: string;
  work: string;
  motoPid: number;
  s3: S3Client;
  scale: number;
  report: (r: Result) => void;
}): Promise<void> {
  const { tools, data, work, motoPid, s3 } = options;
  const shape = shapeAt(options.scale);
  await rm(data, { recursive: true, force: true });
  await writeDataSet(data, shape);
  const order = tools.map((_, i) => tools[(i + options.round) % tools.length] as Tool);
  const base = { round: options.round, motoPid, s3 };
  for (const tool of order) {
    await emptyBucket(s3, tool.bucket);
    await tool.setup();
    for (const phase of ['full', 'unchanged'] as const)
      options.report(
        await phaseRun({ ...base, tool, phase, act: async () => ({ measured: await tool.backup(phase) }) }),
      );
  }
  await changeFiles(data, shape);
  for (const tool of order) {
    options.report(
      await phaseRun({
        ...base,
        tool,
        phase: 'changed',
        act: async () => ({ measured: await tool.backup('changed') }),
      }),
    );
    const target = join(work, `restore-${tool.name}`);
    await rm(target, { recursive: true, force: true });
    options.report(
      await phaseRun({
        ...base,
        tool,
        phase: 'restore',
        act: async () => {
          const { measured, root } = await tool.restore(target);
          return { measured, problems: await compareTrees(data, root) };
        },
      }),
    );
    await rm(target, { recursive: true, force: true });
  }
}

function summary(results: readonly Result[], dataBytes: number): void {
  const tools = [...new Set(results.map((r) => r.tool))];
  const of = (tool: string, phase: Phase): Result[] =>
    results.filter((r) => r.tool === tool && r.phase === phase);
  const mbps = (tool: string, phase: Phase): number =>
    dataBytes / 1e6 / median(of(tool, phase).map((r) => r.seconds));
  console.log(
    '\nMedians (MB/s over the whole data set; CPU-s of the tool / of moto; CPU-s per GB; peak RSS; bucket):',
  );
  for (const phase of PHASES)
    for (const tool of tools) {
      const runs = of(tool, phase);
      const cpu = median(runs.map((r) => r.cpuSeconds));
      console.log(
        `  ${phase.padEnd(9)} ${tool.padEnd(10)} ${mbps(tool, phase).toFixed(1).padStart(7)} MB/s  ` +
          `CPU ${cpu.toFixed(2)} s / moto ${median(runs.map((r) => r.motoCpuSeconds)).toFixed(1)} s  ` +
          `${(cpu / (dataBytes / 1e9)).toFixed(1)} CPU-s/GB  RSS ${Math.max(...runs.map((r) => r.peakRssMiB)).toFixed(0)} MiB  ` +
          `bucket ${(median(runs.map((r) => r.bucketBytes)) / 1e6).toFixed(1)} MB`,
      );
    }
  console.log('\nRatios Lifeboat ÷ peer (throughput; > 1 is Lifeboat faster):');
  for (const phase of PHASES)
    console.log(
      `  ${phase.padEnd(9)} ` +
        tools
          .filter((t) => t !== 'lifeboat')
          .map((t) => `${t} ${(mbps('lifeboat', phase) / mbps(t, phase)).toFixed(2)}×`)
          .join('  '),
    );
  const peak = Math.max(...results.filter((r) => r.tool === 'lifeboat').map((r) => r.peakRssMiB));
  console.log(
    `\nLifeboat's peak RSS ${peak.toFixed(0)} MiB: ${peak <= DATA_MOVER_MEMORY_MIB ? 'within' : 'OVER'} ` +
      `the Fargate task's ${DATA_MOVER_MEMORY_MIB} MiB (${((100 * peak) / DATA_MOVER_MEMORY_MIB).toFixed(0)}%)`,
  );
  const failed = results.filter((r) => r.problems.length > 0);
  console.log(
    failed.length
      ? `\n${failed.length} restore(s) differ from the source (above)`
      : '\nEvery restore identical to the source (content, modes, owners, mtimes to the ns, holes)',
  );
}

async function main(): Promise<void> {
  const scale = Number(process.argv[2] ?? 1);
  const rounds = Number(process.argv[3] ?? 3);
  const work = await mkdtemp(join(tmpdir(), 'bench-peers-'));
  const [tools, kopia, restic, setTimes] = await Promise.all([
    ensureTools(),
    ensurePeer('kopia'),
    ensurePeer('restic'),
    ensureSetTimes(),
  ]);
  const aws = await startMoto({ rootDir: work, tools });
  try {
    const url = new URL(aws.endpoint);
    const endpoint: Endpoint = { url: aws.endpoint, hostPort: url.host, region: aws.region };
    const s3 = new S3Client({
      endpoint: aws.endpoint,
      region: aws.region,
      forcePathStyle: true,
      credentials: {
        accessKeyId: CREDENTIALS.AWS_ACCESS_KEY_ID,
        secretAccessKey: CREDENTIALS.AWS_SECRET_ACCESS_KEY,
      },
    });
    const data = join(work, 'data');
    const main = await lifeboatBundle({
      dir: join(work, 'lifeboat'),
      setTimes,
      ...(process.env.LIFEBOAT_BENCH_MOVER ? { prebuilt: process.env.LIFEBOAT_BENCH_MOVER } : {}),
    });
    const common = { endpoint, data, work };
    const baseline = process.env.LIFEBOAT_BENCH_BASELINE;
    const before = baseline
      ? [
          lifeboatTool({
            ...common,
            main: await lifeboatBundle({ dir: join(work, 'lifeboat-base'), setTimes, prebuilt: baseline }),
            bucket: 'peers-lifeboat-base',
            name: 'lifeboat-base',
          }),
        ]
      : [];
    const all: Tool[] = [
      ...before,
      lifeboatTool({ ...common, main, bucket: 'peers-lifeboat' }),
      kopiaTool({ ...common, binary: kopia, compression: 'zstd', bucket: 'peers-kopia-zstd' }),
      kopiaTool({ ...common, binary: kopia, compression: 'none', bucket: 'peers-kopia-none' }),
      resticTool({ ...common, binary: restic, bucket: 'peers-restic' }),
    ];
    for (const tool of all) await s3.send(new CreateBucketCommand({ Bucket: tool.bucket }));
    const shape = shapeAt(scale);
    const dataBytes = await writeDataSet(data, shape);
    console.log(
      `Data set at scale ${scale}: ${(dataBytes / 1e6).toFixed(0)} MB in ${shape.smallFiles + shape.randomFiles + shape.logFiles + 1} files; ${rounds} rounds; load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    const results: Result[] = [];
    for (let r = 1; r <= rounds; r++)
      await round({
        round: r,
        tools: all,
        data,
        work,
        motoPid: aws.pid,
        s3,
        scale,
        report: (result) => {
          results.push(result);
          console.log(line(result, dataBytes));
        },
      });
    summary(results, dataBytes);
    console.log(
      `load average at the end ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    await stopPids([aws.pid]);
    await rm(work, { recursive: true, force: true });
  }
}

await main();
