/**
 * Backup throughput against the throughput of merely LISTing the same objects from the same
 * apiserver, measured in one run: fills a fresh local cluster with N mixed objects in several
 * namespaces, then times (a) a paginated LIST of those resources and (b) a full local backup,
 * each in its own process, three times in turns. Prints the medians' objects/s and CPU time, their
 * ratio (and each pair's) and peak RSS, and the CPU budget the machine leaves a backup at the
 * target ratio against what this one used; and Velero 1.18 side by side: `velero backup create
 * --wait` on the same objects (its server with 1, then 4, item-block workers), alternating with
 * the built `lifeboat backup create --local` (npm run build, done first), each timed from its
 * command's spawn to its exit; every run and the medians printed with Lifeboat ÷ Velero
 * (throughput), the CPU seconds of each side and the load average.
 * Never asserts timings. VELERO=0 leaves Velero out.
 *   npm run bench -- 10000 50000
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request } from 'node:https';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { defaultItemBlockThreads } from '../../cli/local/item-block-threads.js';
import { type ClusterInfo, startCluster, stopCluster } from '../env/cluster.js';
import { ensureTools } from '../env/ensure-tools.js';
import {
  type BenchVelero,
  buildLifeboat,
  CLOCKS,
  cpuTotal,
  describeRun,
  lifeboatCommand,
  medianOf,
  startBenchVelero,
  type TimedRun,
  timedVelero,
} from './velero-side.js';

const KINDS = [
  {
    share: 0.4,
    path: (ns: string) => `/api/v1/namespaces/${ns}/configmaps`,
    body: (n: string) => ({
      metadata: { name: n, labels: { bench: 'yes' } },
      data: { key: 'x'.repeat(600) },
    }),
  },
  {
    share: 0.2,
    path: (ns: string) => `/api/v1/namespaces/${ns}/secrets`,
    body: (n: string) => ({ metadata: { name: n }, stringData: { password: 'p'.repeat(64) } }),
  },
  {
    share: 0.15,
    path: (ns: string) => `/api/v1/namespaces/${ns}/services`,
    body: (n: string) => ({
      metadata: { name: n },
      spec: { clusterIP: 'None', selector: { app: n }, ports: [{ port: 80 }] },
    }),
  },
  {
    share: 0.1,
    path: (ns: string) => `/api/v1/namespaces/${ns}/serviceaccounts`,
    body: (n: string) => ({ metadata: { name: n } }),
  },
  {
    share: 0.15,
    path: (ns: string) => `/apis/apps/v1/namespaces/${ns}/deployments`,
    body: (n: string) => ({
      metadata: { name: n },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: n } },
        template: { metadata: { labels: { app: n } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      },
    }),
  },
];

function post(cluster: ClusterInfo, ca: Buffer, path: string, body: unknown): Promise<void> {
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      `${cluster.server}${path}`,
      {
        method: 'POST',
        ca,
        headers: {
          Authorization: `Bearer ${cluster.token}`,
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(data),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 201 || res.statusCode === 409
            ? resolve()
            : reject(new Error(`POST ${path}: ${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

async function fill(
  cluster: ClusterInfo,
  ca: Buffer,
  options: { from: number; to: number; namespaces: string[] },
): Promise<void> {
  const limit = pLimit(32);
  const jobs: Promise<void>[] = [];
  for (let i = options.from; i < options.to; i++) {
    const ns = options.namespaces[i % options.namespaces.length] ?? 'bench-0';
    // A fixed spread over the kinds by their shares.
    const pick = ((i * 7919) % 1000) / 1000;
    let acc = 0;
    const kind =
      KINDS.find((k) => {
        acc += k.share;
        return pick < acc;
      }) ?? KINDS[0];
    if (!kind) continue;
    jobs.push(limit(() => post(cluster, ca, kind.path(ns), kind.body(`obj-${i}`))));
  }
  await Promise.all(jobs);
}

/**
 * One run in its own process. The run reports what the cluster's processes (etcd, the
 * apiserver, the controllers, KWOK) used meanwhile, on the same cores: sampled by the run itself
 * at its start and end, so the child's own start-up does not count.
 */
function measure(
  mode: 'list' | 'backup',
  kubeconfig: string,
  arg: string,
  clusterPids: readonly number[],
): Measured {
  const started = performance.now();
  const out = execFileSync(
    process.execPath,
    // The heap cap the `lifeboat` command runs with (cli/bin/lifeboat.ts).
    ['--max-old-space-size=384', '--import', 'tsx', 'test/bench/backup-run.ts', mode, kubeconfig, arg],
    {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
      env: { ...process.env, CONTROL_PLANE_PIDS: clusterPids.join(',') },
    },
  );
  const measured = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as Omit<Measured, 'wallMs'>;
  return { ...measured, wallMs: performance.now() - started };
}

interface Measured {
  /** The whole child process: Node's and tsx's start-up included, as a CLI user waits. */
  readonly wallMs: number;
  readonly objects: number;
  readonly ms: number;
  readonly cpuMs: number;
  readonly controlPlaneCpuMs: number;
  readonly maxRssMb: number;
}

/** The ratio the design asks of a backup against the LIST (../shared/DESIGN.md §7). */
const TARGET = 0.7;

/**
 * What the machine leaves a backup at the target ratio: in the time the target allows, the
 * cores give `cores × time` CPU seconds to the backup's process and the control plane together.
 * The LIST's own CPU (its process and the control plane's, per object) is spent by a backup too;
 * the rest, per object, is all a backup may add (serializing, grouping, archiving, compressing,
 * writing, its runtime's JIT and GC) and still reach the target, however well it uses the cores.
 */
function cpuBudget(list: Measured, backup: Measured, cores: number): string {
  const perObject = (cpuMs: number, objects: number): number => (cpuMs * 1000) / objects;
  const listOurs = perObject(list.cpuMs, list.objects);
  const listCluster = perObject(list.controlPlaneCpuMs, list.objects);
  const allowedMsPerObject = list.ms / list.objects / TARGET;
  const budget = allowedMsPerObject * 1000 * cores - listOurs - listCluster;
  const added =
    perObject(backup.cpuMs, backup.objects) +
    perObject(backup.controlPlaneCpuMs, backup.objects) -
    listOurs -
    listCluster;
  return (
    `CPU per object: LIST ${listOurs.toFixed(0)} µs + control plane ${listCluster.toFixed(0)} µs; ` +
    `at ratio ${TARGET} on ${cores} cores a backup may add ${budget.toFixed(0)} µs; this backup added ${added.toFixed(0)} µs ` +
    `(process ${perObject(backup.cpuMs, backup.objects).toFixed(0)} µs, control plane ${perObject(backup.controlPlaneCpuMs, backup.objects).toFixed(0)} µs)`
  );
}

/** The run of median elapsed time among `runs` (an odd count), and the largest peak RSS. */
function median(runs: readonly Measured[]): Measured & { peakRssMb: number } {
  const sorted = [...runs].sort((a, b) => a.ms - b.ms);
  const middle = sorted[Math.floor(sorted.length / 2)] as Measured;
  return { ...middle, peakRssMb: Math.max(...runs.map((r) => r.maxRssMb)) };
}

/** LIST and backup measured in turns, so a burst of other work on the machine hits both alike. */
const PAIRS = 3;

/**
 * Lifeboat's backup and Velero's of the same namespaces, in turns, with Velero's server at
 * 1 and then 4 item-block workers, each timed from its command's spawn to its exit (CLOCKS).
 * Lifeboat ÷ Velero compares throughputs: Velero's wall time over Lifeboat's.
 */
async function veleroRows(options: {
  velero: BenchVelero;
  kubeconfig: string;
  pids: readonly number[];
  target: number;
}): Promise<string[]> {
  const rows: string[] = [];
  for (const workers of [1, 4]) {
    if (workers !== 1) await options.velero.restart([`--item-block-worker-count=${workers}`]);
    const ours: TimedRun[] = [];
    const theirs: TimedRun[] = [];
    for (let pair = 0; pair < PAIRS; pair++) {
      const dir = await mkdtemp(join(tmpdir(), 'lifeboat-bench-cli-'));
      const name = `${options.target}-${workers}-${pair}`;
      const o = await lifeboatCommand(
        [
          ...['backup', 'create', `lifeboat-${name}`, '--local', '--dir', dir],
          ...['--kubeconfig', options.kubeconfig, '--include-namespaces', 'bench-*'],
        ],
        options.pids,
      );
      await rm(dir, { recursive: true, force: true });
      if (!o.stdout.includes(': Completed'))
        throw new Error(`Lifeboat's backup did not complete: ${o.stdout}`);
      ours.push(o);
      const run = await timedVelero(
        options.velero,
        ['backup', 'create', `velero-${name}`, '--include-namespaces', 'bench-*'],
        options.pids,
      );
      theirs.push(run);
      process.stderr.write(
        `  run ${pair + 1}: Lifeboat ${describeRun(o)} | Velero (${workers} worker(s)) ${describeRun(run)}, ${run.phase} | Lifeboat ÷ Velero ${(run.ms / o.ms).toFixed(2)} (wall), ${(cpuTotal(run) / cpuTotal(o)).toFixed(2)} (CPU)\n`,
      );
    }
    const wall = medianOf(ours.map((o) => o.ms));
    const velero = medianOf(theirs.map((t) => t.ms));
    const cpu = medianOf(ours.map(cpuTotal));
    const veleroCpu = medianOf(theirs.map(cpuTotal));
    rows.push(
      `objects ${options.target} | Velero 1.18 (${workers} item-block worker(s)) median ${(velero / 1000).toFixed(2)} s, CPU ${veleroCpu.toFixed(1)} s; Lifeboat median ${(wall / 1000).toFixed(2)} s, CPU ${cpu.toFixed(1)} s | Lifeboat ÷ Velero ${(velero / wall).toFixed(2)} (wall), ${(veleroCpu / cpu).toFixed(2)} (CPU); runs (wall) ${theirs.map((v, i) => (v.ms / (ours[i] as TimedRun).ms).toFixed(2)).join(', ')} | load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  }
  await options.velero.restart([]);
  return rows;
}

async function main(): Promise<void> {
  const sizes = process.argv
    .slice(2)
    .map(Number)
    .filter((n) => n > 0);
  const targets = sizes.length > 0 ? sizes : [10_000, 50_000];
  const tools = await ensureTools();
  const root = await mkdtemp(join(tmpdir(), 'lifeboat-bench-'));
  const cluster = await startCluster({ name: 'bench', rootDir: root, tools });
  const velero =
    process.env.VELERO === '0' ? undefined : await startBenchVelero({ tools, cluster, rootDir: root });
  if (velero) {
    buildLifeboat();
    process.stdout.write(`${CLOCKS}\n`);
  }
  try {
    const ca = await readFile(cluster.caFile);
    const namespaces = Array.from({ length: 10 }, (_, i) => `bench-${i}`);
    for (const ns of namespaces) await post(cluster, ca, '/api/v1/namespaces', { metadata: { name: ns } });
    const rows: string[] = [];
    let filled = 0;
    for (const target of targets) {
      const t0 = performance.now();
      await fill(cluster, ca, { from: filled, to: target, namespaces });
      filled = target;
      process.stderr.write(`filled ${target} objects in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
      // The controllers add ReplicaSets and endpoints for what was just created: measuring while
      // they still write would measure their load too. Wait until the objects hold still.
      let settled = -1;
      for (let round = 0; round < 40; round++) {
        const { objects } = measure('list', cluster.kubeconfig, 'bench-*', cluster.pids);
        if (objects === settled) break;
        settled = objects;
        await new Promise((resolve) => setTimeout(resolve, 5_000));
      }
      const lists: Measured[] = [];
      const backups: Measured[] = [];
      for (let pair = 0; pair < PAIRS; pair++) {
        lists.push(measure('list', cluster.kubeconfig, 'bench-*', cluster.pids));
        backups.push(measure('backup', cluster.kubeconfig, 'bench-*', cluster.pids));
      }
      const threads = process.env.THREADS ?? String(defaultItemBlockThreads());
      const list = median(lists);
      const backup = median(backups);
      const listRate = list.objects / (list.ms / 1000);
      const backupRate = backup.objects / (backup.ms / 1000);
      const ratios = lists.map((l, i) => {
        const b = backups[i] as Measured;
        return b.objects / b.ms / (l.objects / l.ms);
      });
      rows.push(
        [
          `objects ${target}`,
          `LIST ${list.objects} in ${(list.ms / 1000).toFixed(2)} s = ${listRate.toFixed(0)}/s (CPU ${(list.cpuMs / 1000).toFixed(2)} s, RSS ${list.peakRssMb.toFixed(0)} MiB)`,
          `backup ${backup.objects} in ${(backup.ms / 1000).toFixed(2)} s = ${backupRate.toFixed(0)}/s (CPU ${(backup.cpuMs / 1000).toFixed(2)} s, peak RSS ${backup.peakRssMb.toFixed(0)} MiB)`,
          `ratio backup/LIST ${(backupRate / listRate).toFixed(2)} (medians of ${PAIRS} alternating pairs; pairs ${ratios.map((r) => r.toFixed(2)).join(', ')}; ItemBlock workers in ${threads} worker thread(s))`,
          cpuBudget(list, backup, availableParallelism()),
        ].join(' | '),
      );
      process.stdout.write(`${rows.at(-1)}\n`);
      if (velero) {
        const sideBySide = await veleroRows({
          velero,
          kubeconfig: cluster.kubeconfig,
          pids: cluster.pids,
          target,
        });
        for (const row of sideBySide) process.stdout.write(`${row}\n`);
      }
    }
  } finally {
    await velero?.stop();
    await stopCluster(cluster);
    await rm(root, { recursive: true, force: true });
  }
}

await main();
