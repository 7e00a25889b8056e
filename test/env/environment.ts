/**
 * The whole local test environment: the source cluster, moto, and on demand a second (DR)
 * cluster. Described by a JSON document with every PID it started, so it can be reused while
 * alive and stopped by PID from anywhere.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type ClusterInfo, startCluster, stopCluster } from './cluster.js';
import type { Tools } from './ensure-tools.js';
import { type AwsInfo, startMoto } from './moto.js';
import { pidsAlive, stopPids } from './processes.js';

export interface TestEnvironment {
  readonly rootDir: string;
  readonly tools: Tools;
  readonly clusters: { readonly source: ClusterInfo; readonly dr?: ClusterInfo };
  readonly aws: AwsInfo;
  /** True when the environment outlives this test run (`npm run env:up`). */
  readonly persistent: boolean;
}

export function environmentPids(env: TestEnvironment): number[] {
  return [...env.clusters.source.pids, ...(env.clusters.dr?.pids ?? []), env.aws.pid];
}

export async function startEnvironment(options: {
  tools: Tools;
  withDrCluster: boolean;
  persistent: boolean;
  rootDir?: string;
}): Promise<TestEnvironment> {
  const rootDir = options.rootDir ?? (await mkdtemp(join(tmpdir(), 'lifeboat-env-')));
  await mkdir(rootDir, { recursive: true });
  const results = await Promise.allSettled([
    startCluster({ name: 'source', rootDir, tools: options.tools, detached: options.persistent }),
    startMoto({ rootDir, tools: options.tools, detached: options.persistent }),
    options.withDrCluster
      ? startCluster({ name: 'dr', rootDir, tools: options.tools, detached: options.persistent })
      : Promise.resolve(undefined),
  ] as const);
  const [source, aws, dr] = results;
  const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (
    failures.length > 0 ||
    source.status !== 'fulfilled' ||
    aws.status !== 'fulfilled' ||
    dr.status !== 'fulfilled'
  ) {
    if (source.status === 'fulfilled') await stopCluster(source.value);
    if (dr.status === 'fulfilled' && dr.value) await stopCluster(dr.value);
    if (aws.status === 'fulfilled') await stopPids([aws.value.pid]);
    const reasons = failures.map((f) => (f.reason instanceof Error ? f.reason.message : String(f.reason)));
    throw new Error(reasons.join('\n\n'));
  }
  return {
    rootDir,
    tools: options.tools,
    clusters: dr.value ? { source: source.value, dr: dr.value } : { source: source.value },
    aws: aws.value,
    persistent: options.persistent,
  };
}

export async function stopEnvironment(env: TestEnvironment, options: { keepFiles: boolean }): Promise<void> {
  await stopPids(environmentPids(env).reverse());
  if (!options.keepFiles) await rm(env.rootDir, { recursive: true, force: true });
}

export async function saveEnvironment(file: string, env: TestEnvironment): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify(env, null, 2), { mode: 0o600 });
}

/** The saved environment if every one of its processes is still alive, otherwise undefined. */
export async function loadLiveEnvironment(file: string): Promise<TestEnvironment | undefined> {
  if (!existsSync(file)) return undefined;
  const env = JSON.parse(await readFile(file, 'utf8')) as TestEnvironment;
  return pidsAlive(environmentPids(env)) ? env : undefined;
}
