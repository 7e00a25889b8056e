/**
 * Restore throughput against a plain parallel create of the same objects at the same
 * concurrency, measured in one run on a fresh local cluster: N mixed objects are backed up
 * locally; their namespaces are deleted; (a) the baseline creates the prepared objects directly,
 * namespaces are deleted again, (b) a full local restore runs. Prints objects/s and the ratio.
 * Then Velero 1.18 side by side: a Velero backup of the same objects, and Lifeboat's and
 * Velero's restores of them in turns (namespaces deleted before each), every run and the medians
 * printed with Lifeboat ÷ Velero (throughput), each timed from its command's spawn to its exit
 * (`velero restore create --wait`; the built `lifeboat restore create --local`, npm run build
 * done first), with each side's CPU seconds and the load average.
 * VELERO=0 leaves Velero out.
 *   npm run bench:restore -- 10000
 */

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request } from 'node:https';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { runLocalBackup } from '../../cli/local/backup-runtime.js';
import { runLocalRestore } from '../../cli/local/restore-runtime.js';
import { readBackupArchive } from '../../shared/adapters/backup-archive-reader.js';
import { clusterFromKubeconfig } from '../../shared/adapters/kubernetes-cluster.js';
import { LocalDirectoryStore } from '../../shared/adapters/local-directory-store.js';
import { prepareForRestore } from '../../shared/domain/restore/item.js';
import { restorePhases } from '../../shared/domain/restore/order.js';
import { backupKeys } from '../../shared/domain/storage/keys.js';
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

const CONCURRENCY = 16;

function call(
  cluster: ClusterInfo,
  ca: Buffer,
  method: string,
  path: string,
  body?: unknown,
): Promise<number> {
  const data = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      `${cluster.server}${path}`,
      {
        method,
        ca,
        headers: {
          Authorization: `Bearer ${cluster.token}`,
          'Content-Type': 'application/json',
          ...(data ? { 'Content-Length': Buffer.byteLength(data) } : {}),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

async function deleteNamespaces(cluster: ClusterInfo, ca: Buffer, namespaces: string[]): Promise<void> {
  for (const ns of namespaces) await call(cluster, ca, 'DELETE', `/api/v1/namespaces/${ns}`);
  for (;;) {
    const codes = await Promise.all(
      namespaces.map((ns) => call(cluster, ca, 'GET', `/api/v1/namespaces/${ns}`)),
    );
    if (codes.every((c) => c === 404)) return;
    await new Promise((r) => setTimeout(r, 500));
  }
}

function collectionPath(gr: string, object: Record<string, unknown>): string {
  const apiVersion = String(object.apiVersion);
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const ns = (object.metadata as { namespace?: string }).namespace;
  return `${base}${ns ? `/namespaces/${ns}` : ''}/${gr.split('.')[0]}`;
}

const PAIRS = 3;

/** Lifeboat's and Velero's restores of the same objects in turns; one line per run, then medians. */
async function veleroSideBySide(options: {
  velero: BenchVelero;
  restore: (name: string) => Promise<TimedRun>;
  reset: () => Promise<void>;
  namespaces: readonly string[];
  objects: number;
  controlPlane: readonly number[];
}): Promise<string> {
  const { velero } = options;
  const backup = await timedVelero(velero, [
    'backup',
    'create',
    'rbench-velero',
    '--include-namespaces',
    options.namespaces.join(','),
    '--include-resources',
    'configmaps,secrets,namespaces',
  ]);
  if (backup.phase !== 'Completed') throw new Error(`Velero's backup ended ${backup.phase}`);
  process.stderr.write(`Velero backup ${backup.phase} in ${(backup.ms / 1000).toFixed(1)} s\n`);
  const ours: TimedRun[] = [];
  const theirs: TimedRun[] = [];
  for (let pair = 0; pair < PAIRS; pair++) {
    await options.reset();
    const o = await options.restore(`r-lifeboat-${pair}`);
    ours.push(o);
    await options.reset();
    const run = await timedVelero(
      velero,
      ['restore', 'create', `r-velero-${pair}`, '--from-backup', 'rbench-velero'],
      options.controlPlane,
    );
    theirs.push(run);
    process.stderr.write(
      `  run ${pair + 1}: Lifeboat ${describeRun(o)} | Velero ${describeRun(run)}, ${run.phase} | Lifeboat ÷ Velero ${(run.ms / o.ms).toFixed(2)} (wall), ${(cpuTotal(run) / cpuTotal(o)).toFixed(2)} (CPU)\n`,
    );
  }
  const ratios = theirs.map((v, i) => (v.ms / (ours[i] as TimedRun).ms).toFixed(2));
  const wall = medianOf(ours.map((o) => o.ms));
  const veleroWall = medianOf(theirs.map((t) => t.ms));
  const cpu = medianOf(ours.map(cpuTotal));
  const veleroCpu = medianOf(theirs.map(cpuTotal));
  return `objects ${options.objects} | Lifeboat restore median ${(wall / 1000).toFixed(2)} s, CPU ${cpu.toFixed(1)} s | Velero 1.18 restore median ${(veleroWall / 1000).toFixed(2)} s, CPU ${veleroCpu.toFixed(1)} s | Lifeboat ÷ Velero ${(veleroWall / wall).toFixed(2)} (wall; runs ${ratios.join(', ')}), ${(veleroCpu / cpu).toFixed(2)} (CPU) | load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`;
}

async function main(): Promise<void> {
  const target = Number(process.argv[2] ?? 10_000);
  const tools = await ensureTools();
  const root = await mkdtemp(join(tmpdir(), 'lifeboat-rbench-'));
  const cluster = await startCluster({ name: 'rbench', rootDir: root, tools });
  let velero: BenchVelero | undefined;
  try {
    const ca = await readFile(cluster.caFile);
    const namespaces = Array.from({ length: 10 }, (_, i) => `rbench-${i}`);
    for (const ns of namespaces)
      await call(cluster, ca, 'POST', '/api/v1/namespaces', { metadata: { name: ns } });
    const limit = pLimit(32);
    await Promise.all(
      Array.from({ length: target }, (_, i) =>
        limit(() => {
          const ns = namespaces[i % namespaces.length] ?? 'rbench-0';
          return i % 3 === 0
            ? call(cluster, ca, 'POST', `/api/v1/namespaces/${ns}/secrets`, {
                metadata: { name: `s-${i}` },
                stringData: { p: 'x'.repeat(64) },
              })
            : call(cluster, ca, 'POST', `/api/v1/namespaces/${ns}/configmaps`, {
                metadata: { name: `c-${i}` },
                data: { k: 'x'.repeat(600) },
              });
        }),
      ),
    );
    const kube = await clusterFromKubeconfig({ path: cluster.kubeconfig });
    const store = new LocalDirectoryStore(join(root, 'store'));
    const backupName = 'rbench';
    await runLocalBackup(
      {
        cluster: 'rbench',
        backup: {
          metadata: { name: backupName },
          spec: {
            includedNamespaces: namespaces,
            includedResources: ['configmaps', 'secrets', 'namespaces'],
          },
        },
      },
      { cluster: kube, store },
    );
    // The baseline's objects: exactly what the restore will create, prepared the same way.
    const objects: { gr: string; object: Record<string, unknown> }[] = [];
    const body = await store.getStream(backupKeys(backupName).contents);
    if (!body) throw new Error('no backup');
    await readBackupArchive({
      body,
      onItem: async (item) => {
        if (item.version) return;
        objects.push({
          gr: item.groupResource,
          object: prepareForRestore(item.object, {
            groupResource: item.groupResource,
            backupName,
            restoreName: 'baseline',
          }),
        });
      },
    });

    await deleteNamespaces(cluster, ca, namespaces);
    const baselineStart = performance.now();
    for (const phase of restorePhases(new Set(objects.map((o) => o.gr)))) {
      const create = pLimit(CONCURRENCY);
      await Promise.all(
        objects
          .filter((o) => o.gr === phase)
          .map((o) => create(() => call(cluster, ca, 'POST', collectionPath(o.gr, o.object), o.object))),
      );
    }
    const baselineMs = performance.now() - baselineStart;

    await deleteNamespaces(cluster, ca, namespaces);
    const restoreStart = performance.now();
    const result = (await runLocalRestore(
      { cluster: 'rbench', restore: { metadata: { name: 'r1' }, spec: { backupName } } },
      { cluster: kube, store, concurrency: CONCURRENCY },
    )) as { created: number; skipped: number };
    const restoreMs = performance.now() - restoreStart;

    const baselineRate = objects.length / (baselineMs / 1000);
    const restoreRate = (result.created + result.skipped) / (restoreMs / 1000);
    if (process.env.VELERO !== '0') {
      velero = await startBenchVelero({ tools, cluster, rootDir: root });
      buildLifeboat();
      process.stdout.write(`${CLOCKS}\n`);
      const line = await veleroSideBySide({
        velero,
        namespaces,
        objects: objects.length,
        controlPlane: cluster.pids,
        reset: () => deleteNamespaces(cluster, ca, namespaces),
        // As a user restores: the built command, its own concurrency.
        restore: async (name) => {
          const run = await lifeboatCommand(
            [
              ...['restore', 'create', name, '--from-backup', backupName, '--local'],
              ...['--dir', join(root, 'store'), '--kubeconfig', cluster.kubeconfig],
            ],
            cluster.pids,
          );
          if (!run.stdout.includes(': Completed'))
            throw new Error(`Lifeboat's restore did not complete: ${run.stdout}`);
          return run;
        },
      });
      process.stdout.write(`${line}\n`);
    }
    process.stdout.write(
      `objects ${objects.length} | plain parallel create (${CONCURRENCY}) ${baselineRate.toFixed(0)}/s | restore ${restoreRate.toFixed(0)}/s (${result.created} created, ${result.skipped} skipped) | ratio restore/create ${(restoreRate / baselineRate).toFixed(2)}\n`,
    );
  } finally {
    await velero?.stop();
    await stopCluster(cluster);
    await rm(root, { recursive: true, force: true });
  }
}

await main();
