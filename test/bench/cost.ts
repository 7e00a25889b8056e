/**
 * What a backup and a restore of N objects would cost in AWS (`npm run bench:cost -- 10000`):
 * the deployment rehearsal (test/rehearsal) runs both from the synthesized cloud assembly, its
 * meter counts Lambda invocations and GB-seconds, state transitions, SQS, S3, KMS and EBS requests
 * and Fargate seconds, and test/rehearsal/prices.ts prices them at public list prices. Prints a
 * table per run and the price per 10,000 objects against the target ($0.01 per 10,000 objects
 * backed up). GB-seconds are measured on this machine, whose two cores run every function and
 * the cluster at once: they are an upper bound of what Lambda would bill.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import pLimit from 'p-limit';
import { ensureTools } from '../env/ensure-tools.js';
import { startMoto } from '../env/moto.js';
import { stopPids } from '../env/processes.js';
import type { Usage } from '../rehearsal/meter.js';
import { PRICES_READ_ON, priced, usageSince } from '../rehearsal/prices.js';
import { startRehearsal } from '../rehearsal/rehearsal.js';

const TARGET_PER_10K = 0.01;

function table(title: string, usage: Usage, objects: number): number {
  const lines = priced(usage);
  const total = lines.reduce((sum, l) => sum + l.dollars, 0);
  process.stdout.write(`\n${title} (${objects} objects)\n`);
  process.stdout.write(
    `${'what'.padEnd(30)}${'quantity'.padStart(14)}  ${'unit'.padEnd(12)}${'USD'.padStart(12)}\n`,
  );
  for (const l of lines)
    process.stdout.write(
      `${l.what.padEnd(30)}${l.quantity.toFixed(l.unit.endsWith('-s') ? 1 : 0).padStart(14)}  ${l.unit.padEnd(12)}${l.dollars.toFixed(6).padStart(12)}\n`,
    );
  process.stdout.write(`${'total'.padEnd(56)}${total.toFixed(6).padStart(12)}\n`);
  process.stdout.write(`per 10,000 objects: $${((total / objects) * 10_000).toFixed(5)}\n`);
  return (total / objects) * 10_000;
}

async function fill(core: CoreV1Api, options: { namespaces: string[]; objects: number }): Promise<void> {
  for (const name of options.namespaces) await core.createNamespace({ body: { metadata: { name } } });
  const limit = pLimit(16);
  const jobs: Promise<unknown>[] = [];
  for (let i = 0; i < options.objects; i++) {
    const namespace = options.namespaces[i % options.namespaces.length] ?? 'cost-0';
    const metadata = { name: `obj-${i}`, labels: { app: `app-${i % 20}` } };
    const data = { index: String(i), text: 'x'.repeat(200) };
    jobs.push(
      limit(() =>
        i % 5 === 0
          ? core.createNamespacedSecret({ namespace, body: { metadata, stringData: data } })
          : core.createNamespacedConfigMap({ namespace, body: { metadata, data } }),
      ),
    );
  }
  await Promise.all(jobs);
}

async function main(): Promise<void> {
  const objects = Number(process.argv[2] ?? 10_000);
  const tools = await ensureTools();
  const root = await mkdtemp(join(tmpdir(), 'lifeboat-cost-'));
  const aws = await startMoto({ rootDir: root, tools });
  const rehearsal = await startRehearsal({ tools, aws });
  try {
    const core = rehearsal.kubeConfig.makeApiClient(CoreV1Api);
    const namespaces = Array.from({ length: 10 }, (_, i) => `cost-${i}`);
    process.stdout.write(`filling the rehearsal cluster with ${objects} ConfigMaps and Secrets…\n`);
    await fill(core, { namespaces, objects });
    const start = rehearsal.report().usage;
    const backupStarted = Date.now();
    const backup = await rehearsal.start('backup', {
      request: {
        cluster: 'rehearsal',
        backup: { metadata: { name: 'cost' }, spec: { includedNamespaces: namespaces } },
      },
    });
    const afterBackup = rehearsal.report().usage;
    process.stdout.write(
      `backup: ${JSON.stringify(backup.output ?? backup)} in ${((Date.now() - backupStarted) / 1000).toFixed(1)} s\n`,
    );
    for (const name of namespaces) await core.deleteNamespace({ name });
    for (const name of namespaces)
      while (
        await core.readNamespace({ name }).then(
          () => true,
          () => false,
        )
      )
        await new Promise((r) => setTimeout(r, 500));
    const restoreStarted = Date.now();
    const restore = await rehearsal.start('restore', {
      request: {
        cluster: 'rehearsal',
        restore: { metadata: { name: 'cost-restore' }, spec: { backupName: 'cost' } },
      },
    });
    const afterRestore = rehearsal.report().usage;
    process.stdout.write(
      `restore: ${JSON.stringify(restore.output ?? restore)} in ${((Date.now() - restoreStarted) / 1000).toFixed(1)} s\n`,
    );
    process.stdout.write(
      `\nPrices: AWS list prices, us-east-1, read ${PRICES_READ_ON} (test/rehearsal/prices.ts)\n`,
    );
    const backupCost = table('Backup', usageSince(afterBackup, start), objects);
    table('Restore', usageSince(afterRestore, afterBackup), objects);
    process.stdout.write(
      `\nbackup per 10,000 objects: $${backupCost.toFixed(5)} (target ≤ $${TARGET_PER_10K.toFixed(2)}: ${backupCost <= TARGET_PER_10K ? 'met' : 'NOT met'})\n`,
    );
    const violations = rehearsal.report().violations;
    if (violations.length > 0) process.stdout.write(`refused calls: ${violations.join('\n')}\n`);
  } finally {
    await rehearsal.stop();
    await stopPids([aws.pid]);
    await rm(root, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
