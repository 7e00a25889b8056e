/**
 * The demo behind `npm run demo`: starts a local Kubernetes control plane (built on first use),
 * installs a sample application (namespaces, Deployments, Services, ConfigMaps, Secrets, a CRD
 * with custom resources), backs it up with `lifeboat backup create --local`, prints
 * `lifeboat backup describe --details`, deletes the application, restores it with
 * `lifeboat restore create --local` and shows the result. The backup stays in ./lifeboat-demo.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiextensionsV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { startCluster, stopCluster } from '../env/cluster.js';
import { ensureTools } from '../env/ensure-tools.js';
import { installSampleApp } from '../fixtures/sample-app.js';

const say = (text: string): void => {
  process.stdout.write(`\n== ${text}\n`);
};

async function main(): Promise<number> {
  say('Preparing a local Kubernetes v1.34 control plane (the first run builds it: several minutes)');
  const tools = await ensureTools();
  const root = await mkdtemp(join(tmpdir(), 'lifeboat-demo-'));
  const cluster = await startCluster({ name: 'demo', rootDir: root, tools });
  try {
    const kc = new KubeConfig();
    kc.loadFromFile(cluster.kubeconfig);
    const suffix = `demo${Date.now().toString(36)}`;
    say('Installing the sample application');
    const app = await installSampleApp(kc, suffix);
    const namespaces = Object.values(app.namespaces);
    process.stdout.write(`namespaces ${namespaces.join(', ')}; CRD ${app.crd.name}\n`);

    const name = `demo-${suffix}`;
    const cli = (args: string[]) =>
      spawnSync(process.execPath, ['cli/bin/lifeboat-tsx.mjs', ...args], { stdio: 'inherit' }).status ?? 1;
    say(
      `lifeboat backup create ${name} --include-namespaces ${namespaces.join(',')} --local --dir ./lifeboat-demo`,
    );
    const created = cli([
      'backup',
      'create',
      name,
      '--include-namespaces',
      namespaces.join(','),
      '--local',
      '--dir',
      './lifeboat-demo',
      '--kubeconfig',
      cluster.kubeconfig,
    ]);
    if (created !== 0) return created;
    say(`lifeboat backup describe ${name} --local --dir ./lifeboat-demo --details`);
    const described = cli(['backup', 'describe', name, '--local', '--dir', './lifeboat-demo', '--details']);
    if (described !== 0) return described;

    say(`Disaster: deleting namespaces ${namespaces.join(', ')} and the CRD`);
    const core = kc.makeApiClient(CoreV1Api);
    for (const ns of namespaces) await core.deleteNamespace({ name: ns });
    await kc.makeApiClient(ApiextensionsV1Api).deleteCustomResourceDefinition({ name: app.crd.name });
    for (;;) {
      const left = (await core.listNamespace()).items.filter((n) =>
        namespaces.includes(n.metadata?.name ?? ''),
      );
      if (left.length === 0) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    process.stdout.write('gone\n');

    const restoreName = `restore-${suffix}`;
    say(`lifeboat restore create ${restoreName} --from-backup ${name} --local --dir ./lifeboat-demo`);
    const restored = cli([
      'restore',
      'create',
      restoreName,
      '--from-backup',
      name,
      '--local',
      '--dir',
      './lifeboat-demo',
      '--kubeconfig',
      cluster.kubeconfig,
    ]);
    if (restored !== 0) return restored;
    say(`lifeboat restore describe ${restoreName} --local --dir ./lifeboat-demo --details`);
    cli(['restore', 'describe', restoreName, '--local', '--dir', './lifeboat-demo', '--details']);
    const back = (await core.listNamespacedConfigMap({ namespace: app.namespaces.shop })).items.map(
      (c) => c.metadata?.name,
    );
    say(`Back in ${app.namespaces.shop}: configmaps ${back.join(', ')}`);
    say(
      `The backup is in ./lifeboat-demo/backups/${name}/ (Velero's layout: velero-backup.json, ${name}.tar.gz, …)`,
    );
    return 0;
  } finally {
    await stopCluster(cluster);
    await rm(root, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
