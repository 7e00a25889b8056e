/**
 * How much of one PlanRestore step (15 minutes) the largest archive the reader accepts would take
 * (ARCHIVE_WORK_BUDGET in shared/adapters/backup-archive-reader.ts). Plans an archive of N
 * ConfigMaps written as Lifeboat writes them (each with its preferred-version copy: 2 entries of
 * about 1 KiB) from a directory store, against a discovery stub (planning asks the cluster
 * nothing else for these), and prints the rate per second of wall and CPU time, and the share of
 * the step's timeout the budget takes at that rate, for entries and for bytes.
 *   npx tsx test/bench/plan-restore-budget.ts 50000
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { planRestore } from '../../functions/plan-restore/plan-restore.js';
import { ARCHIVE_WORK_BUDGET } from '../../shared/adapters/backup-archive-reader.js';
import { LocalDirectoryStore } from '../../shared/adapters/local-directory-store.js';
import { tarOf } from '../../shared/adapters/tar-archive.js';
import { backupKeys, restoreWorkKeys } from '../../shared/domain/storage/keys.js';
import type { Cluster, ClusterWriter } from '../../shared/ports/cluster.js';

const PLAN_RESTORE_TIMEOUT_SECONDS = 15 * 60;

function configMapEntries(count: number): { name: string; body: string }[] {
  const entries = [{ name: 'metadata/version', body: '1.1.0\n' }];
  for (let i = 0; i < count; i++) {
    const namespace = `ns-${i % 50}`;
    const body = JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: `cm-${i}`,
        namespace,
        labels: { app: 'bench', tier: `t${i % 7}` },
        uid: `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`,
        resourceVersion: String(1000 + i),
        creationTimestamp: '2026-01-01T00:00:00Z',
      },
      data: { 'config.yaml': 'x'.repeat(800), key: `value-${i}` },
    });
    entries.push({ name: `resources/configmaps/namespaces/${namespace}/cm-${i}.json`, body });
    entries.push({
      name: `resources/configmaps/v1-preferredversion/namespaces/${namespace}/cm-${i}.json`,
      body,
    });
  }
  return entries;
}

/** Discovery of the two resources the archive holds; planning these asks nothing more. */
const discoveryOnly = {
  discover: async () => ({
    resources: [
      {
        group: '',
        version: 'v1',
        resource: 'configmaps',
        kind: 'ConfigMap',
        shortNames: ['cm'],
        namespaced: true,
        verbs: ['create'],
      },
      {
        group: '',
        version: 'v1',
        resource: 'namespaces',
        kind: 'Namespace',
        shortNames: ['ns'],
        namespaced: false,
        verbs: ['create'],
      },
    ],
    unavailable: [],
  }),
} as unknown as Cluster & ClusterWriter;

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 50_000);
  const dir = await mkdtemp(join(tmpdir(), 'lifeboat-plan-budget-'));
  const store = new LocalDirectoryStore(dir);
  const entries = configMapEntries(count);
  const tar = await tarOf(entries, { mtime: new Date(0) });
  await store.put(backupKeys('bench').contents, gzipSync(tar, { level: 1 }));
  const run = {
    name: 'bench-restore',
    backupName: 'bench',
    cluster: 'bench',
    runId: 'bench',
    startedAt: new Date().toISOString(),
    dryRun: false,
  };
  const request = {
    cluster: 'bench',
    restore: { metadata: { name: run.name }, spec: { backupName: 'bench' } },
  };
  await store.put(restoreWorkKeys(run).request, JSON.stringify(request));
  const started = process.hrtime.bigint();
  const cpuBefore = process.cpuUsage();
  await planRestore({ run }, { store, cluster: discoveryOnly });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  await rm(dir, { recursive: true, force: true });
  const entriesPerSecond = entries.length / seconds;
  const bytesPerSecond = tar.length / seconds;
  const share = (budget: number, rate: number) => (budget / rate / PLAN_RESTORE_TIMEOUT_SECONDS).toFixed(3);
  console.log(
    `planned ${entries.length} entries (${(tar.length / 2 ** 20).toFixed(0)} MiB of tar) in ${seconds.toFixed(2)} s, ${cpuSeconds.toFixed(2)} s of CPU`,
  );
  console.log(
    `rate: ${Math.round(entriesPerSecond)} entries/s (${Math.round(entries.length / cpuSeconds)} per CPU-second), ${(bytesPerSecond / 2 ** 20).toFixed(1)} MiB/s`,
  );
  console.log(
    `budget ${ARCHIVE_WORK_BUDGET.maxEntries} entries / (rate x ${PLAN_RESTORE_TIMEOUT_SECONDS} s): ${share(ARCHIVE_WORK_BUDGET.maxEntries, entriesPerSecond)}`,
  );
  console.log(
    `budget ${ARCHIVE_WORK_BUDGET.maxTotalBytes} bytes / (rate x ${PLAN_RESTORE_TIMEOUT_SECONDS} s): ${share(ARCHIVE_WORK_BUDGET.maxTotalBytes, bytesPerSecond)}`,
  );
}

await main();
