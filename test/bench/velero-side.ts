/**
 * Velero side by side in the benchmarks: a Velero 1.18 server (test/env/velero-server.ts) on the
 * benchmark's cluster and a moto bucket, and its backup and restore timed as a user sees them:
 * the wall time of `velero backup create --wait` / `velero restore create --wait`, the command's
 * own start-up included. Never asserts anything.
 */
import { join } from 'node:path';
import type { ClusterInfo } from '../env/cluster.js';
import type { Tools } from '../env/ensure-tools.js';
import { type AwsInfo, startMoto } from '../env/moto.js';
import { stopPids } from '../env/processes.js';
import { startVeleroServer, type VeleroServer } from '../env/velero-server.js';

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

/** The wall time of one Velero command that waits for its backup or restore to end. */
export async function timedVelero(
  velero: BenchVelero,
  args: readonly string[],
): Promise<{ ms: number; phase: string }> {
  const started = performance.now();
  await velero.server.cli([...args, '--wait'], { timeoutMs: 3_600_000 });
  const ms = performance.now() - started;
  const kind = args[0] ?? 'backup';
  const name = args[2] ?? '';
  const got = JSON.parse(await velero.server.cli([kind, 'get', name, '-o', 'json'])) as {
    status?: { phase?: string };
  };
  return { ms, phase: got.status?.phase ?? 'unknown' };
}

export const medianOf = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};
