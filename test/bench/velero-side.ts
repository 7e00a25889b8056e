/**
 * Velero side by side in the benchmarks: a Velero 1.18 server (test/env/velero-server.ts) on the
 * benchmark's cluster and a moto bucket, and its backup and restore timed as a user sees them:
 * the wall time of `velero backup create --wait` / `velero restore create --wait`, the command's
 * own start-up included; Lifeboat's the same way, from the spawn of the built `lifeboat` command
 * to its exit (`lifeboatCommand`). Both with the CPU seconds each side used meanwhile. Never
 * asserts anything.
 */
import { execFile, spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { ClusterInfo } from '../env/cluster.js';
import type { Tools } from '../env/ensure-tools.js';
import { type AwsInfo, startMoto } from '../env/moto.js';
import { stopPids } from '../env/processes.js';
import { startVeleroServer, type VeleroServer } from '../env/velero-server.js';
import { cpuSecondsOf, endedChildrenCpuSeconds } from './proc.js';

export interface BenchVelero {
  readonly aws: AwsInfo;
  server: VeleroServer;
  /** Restarts the server with these extra flags (one server per host). */
  restart(serverArgs: readonly string[]): Promise<void>;
  stop(): Promise<void>;
}

export async function startBenchVelero(options: {
  tools: Tools;
  cluster: ClusterInfo;
  rootDir: string;
  serverArgs?: readonly string[];
}): Promise<BenchVelero> {
  const aws = await startMoto({ rootDir: join(options.rootDir), tools: options.tools });
  const start = (serverArgs: readonly string[]) =>
    startVeleroServer({
      tools: options.tools.velero,
      kubeconfig: options.cluster.kubeconfig,
      storage: { endpoint: aws.endpoint, region: aws.region, bucket: 'bench', prefix: 'bench' },
      serverArgs,
    });
  const bench: BenchVelero = {
    aws,
    server: await start(options.serverArgs ?? []),
    async restart(serverArgs) {
      await bench.server.stop();
      bench.server = await start(serverArgs);
    },
    async stop() {
      await bench.server.stop();
      await stopPids([aws.pid]);
    },
  };
  return bench;
}

/** CPU seconds of these running processes so far (those that have ended count 0). */
const cpuOf = (pids: readonly number[]): number =>
  pids.reduce((sum, pid) => {
    try {
      return sum + cpuSecondsOf(pid);
    } catch {
      return sum;
    }
  }, 0);

/** One side's run: its wall time, and the CPU seconds of its command and of the processes serving it. */
export interface TimedRun {
  readonly ms: number;
  /** The command's process (its threads included). */
  readonly commandCpuS: number;
  /** Velero: its server's and moto's (where it writes); Lifeboat: none (it writes a directory). */
  readonly serverCpuS: number;
  /** The cluster's processes (apiserver, etcd, controllers, KWOK), shared by whatever runs. */
  readonly controlPlaneCpuS: number;
}

export const cpuTotal = (run: TimedRun): number => run.commandCpuS + run.serverCpuS + run.controlPlaneCpuS;

/** `12.34 s (CPU 1.2 command + 3.4 server + 5.6 control plane = 10.2 s)` */
export function describeRun(run: TimedRun): string {
  const f = (s: number): string => s.toFixed(1);
  return `${(run.ms / 1000).toFixed(2)} s (CPU ${f(run.commandCpuS)} command + ${f(run.serverCpuS)} server + ${f(run.controlPlaneCpuS)} control plane = ${f(cpuTotal(run))} s)`;
}

async function timed(
  what: { server: readonly number[]; controlPlane: readonly number[] },
  command: () => Promise<unknown>,
): Promise<TimedRun> {
  const before = {
    command: endedChildrenCpuSeconds(),
    server: cpuOf(what.server),
    controlPlane: cpuOf(what.controlPlane),
  };
  const started = performance.now();
  await command();
  const ms = performance.now() - started;
  return {
    ms,
    commandCpuS: endedChildrenCpuSeconds() - before.command,
    serverCpuS: cpuOf(what.server) - before.server,
    controlPlaneCpuS: cpuOf(what.controlPlane) - before.controlPlane,
  };
}

/** What each side's clock covers, printed with the figures. */
export const CLOCKS =
  'clocks: Lifeboat = spawn of the built command (node dist/lib/lifeboat.mjs <verb> create NAME --local --dir DIR --kubeconfig FILE …) to its exit: Node start, kubeconfig, apiserver probe, the whole state machine, the files written, the result printed; it writes a local directory. ' +
  'Velero = spawn of `velero <verb> create NAME … --wait` to its exit: CLI start, the object created, its server (already running, out of cluster) doing the work and writing to moto S3 on this machine, the final phase seen by the CLI. ' +
  'CPU: each command process (threads included), Velero server + moto, and the control plane during the run.';

const ROOT = resolve(import.meta.dirname, '..', '..');
const run = promisify(execFile);

/** Builds the `lifeboat` command into dist/ (npm run build), as a user installs it. */
export function buildLifeboat(): void {
  const built = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'cli', 'build.ts')], {
    cwd: ROOT,
    stdio: ['ignore', process.stderr, 'inherit'],
  });
  if (built.status !== 0) throw new Error('npm run build failed');
}

/** Runs the built `lifeboat` command (npm run build) to its end, timed as Velero's is. */
export async function lifeboatCommand(
  args: readonly string[],
  controlPlane: readonly number[],
): Promise<TimedRun & { stdout: string }> {
  let stdout = '';
  const measured = await timed({ server: [], controlPlane }, async () => {
    // The heap cap the installed command's shebang gives it (cli/bin/lifeboat.ts).
    const bin = ['--max-old-space-size=384', join(ROOT, 'dist', 'lib', 'lifeboat.mjs')];
    const out = await run(process.execPath, [...bin, ...args], {
      maxBuffer: 64 * 2 ** 20,
      timeout: 3_600_000,
    });
    stdout = out.stdout;
  });
  return { ...measured, stdout };
}

/** One Velero command that waits for its backup or restore to end: timed, and its phase. */
export async function timedVelero(
  velero: BenchVelero,
  args: readonly string[],
  controlPlane: readonly number[] = [],
): Promise<TimedRun & { phase: string }> {
  const measured = await timed({ server: [velero.server.process.pid, velero.aws.pid], controlPlane }, () =>
    velero.server.cli([...args, '--wait'], { timeoutMs: 3_600_000 }),
  );
  const kind = args[0] ?? 'backup';
  const name = args[2] ?? '';
  const got = JSON.parse(await velero.server.cli([kind, 'get', name, '-o', 'json'])) as {
    status?: { phase?: string };
  };
  return { ...measured, phase: got.status?.phase ?? 'unknown' };
}

export const medianOf = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};
