/**
 * One measured run for the backup benchmark, in its own process so its peak RSS is its own:
 * `list` pages with limit 500 through every resource type a backup of the namespaces matching
 * ARG lists, counting those namespaces' objects (the baseline); `backup` backs them up. Prints one JSON line: objects, milliseconds, peak RSS.
 * THREADS=N sets the backup's worker threads (default: the runtime's, defaultItemBlockThreads);
 * CONTROL_PLANE_PIDS=p,q,… adds the CPU those processes used during the run (0 without).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runLocalBackup } from '../../cli/local/backup-runtime.js';
import { clusterFromKubeconfig } from '../../shared/adapters/kubernetes-cluster.js';
import { LocalDirectoryStore } from '../../shared/adapters/local-directory-store.js';
import { collectionOrder } from '../../shared/domain/kubernetes/api-resources.js';
import { shouldInclude } from '../../shared/domain/kubernetes/includes-excludes.js';
import { cpuSecondsOf } from './proc.js';

const [mode, kubeconfig, arg] = process.argv.slice(2);
if (!kubeconfig || !arg) throw new Error('usage: backup-run.ts list|backup KUBECONFIG ARG');
const cluster = await clusterFromKubeconfig({ path: kubeconfig });

const controlPlane = (process.env.CONTROL_PLANE_PIDS ?? '').split(',').filter(Boolean).map(Number);
const controlPlaneCpu = (): number => controlPlane.reduce((sum, pid) => sum + cpuSecondsOf(pid), 0);
const controlPlaneBefore = controlPlaneCpu();
const started = performance.now();
const cpuBefore = process.cpuUsage();
let objects = 0;
if (mode === 'list') {
  // The same objects the backup selects: every resource type it lists (its collection order,
  // cohabiting duplicates dropped), items of the namespaces the glob names, and those namespaces.
  const namespaces = { includes: [arg], excludes: [] };
  for (const resource of collectionOrder((await cluster.discover()).resources)) {
    let token: string | undefined;
    do {
      const page = await cluster.listPage({
        resource,
        limit: 500,
        ...(token ? { continueToken: token } : {}),
      });
      for (const item of page.items) {
        const m = (item.metadata ?? {}) as { name?: string; namespace?: string };
        const ns = resource.namespaced
          ? m.namespace
          : resource.resource === 'namespaces'
            ? m.name
            : undefined;
        if (ns !== undefined && shouldInclude(namespaces, ns)) objects++;
      }
      token = page.continueToken;
    } while (token);
  }
} else {
  const dir = await mkdtemp(join(tmpdir(), 'lifeboat-bench-'));
  const request = {
    cluster: 'bench',
    backup: { metadata: { name: `bench-${Date.now()}` }, spec: { includedNamespaces: [arg] } },
  };
  const result = (await runLocalBackup(request, {
    cluster,
    store: new LocalDirectoryStore(dir),
    workers: 4,
    ...(process.env.THREADS !== undefined ? { threads: Number(process.env.THREADS) } : {}),
  })) as { items: number; phase: string };
  if (result.phase !== 'Completed') throw new Error(`backup ended ${result.phase}`);
  objects = result.items;
  await rm(dir, { recursive: true, force: true });
}
const ms = performance.now() - started;
const cpu = process.cpuUsage(cpuBefore);
const cpuMs = Math.round((cpu.user + cpu.system) / 1000);
const controlPlaneCpuMs = Math.round((controlPlaneCpu() - controlPlaneBefore) * 1000);
process.stdout.write(
  `${JSON.stringify({ mode, objects, ms, cpuMs, controlPlaneCpuMs, maxRssMb: process.resourceUsage().maxRSS / 1024 })}\n`,
);
