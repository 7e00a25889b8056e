/**
 * Keeps the test environment running between test runs for fast iteration:
 * `npm run env:up` starts it (both clusters and moto) and records it; test runs then reuse it;
 * `npm run env:down` stops it by the recorded PIDs. `status` prints where it is.
 */
import { rm } from 'node:fs/promises';
import { ensureTools } from './ensure-tools.js';
import { loadLiveEnvironment, saveEnvironment, startEnvironment, stopEnvironment } from './environment.js';
import { persistentEnvFile } from './versions.js';

async function main(command: string | undefined): Promise<void> {
  const file = persistentEnvFile();
  const live = await loadLiveEnvironment(file);
  switch (command) {
    case 'up': {
      if (live) {
        process.stdout.write(`already up: ${live.rootDir}\n`);
        return;
      }
      const env = await startEnvironment({
        tools: await ensureTools(),
        withDrCluster: true,
        persistent: true,
      });
      await saveEnvironment(file, env);
      process.stdout.write(
        [
          `environment up in ${env.rootDir}`,
          `  source cluster: KUBECONFIG=${env.clusters.source.kubeconfig}`,
          `  dr cluster:     KUBECONFIG=${env.clusters.dr?.kubeconfig ?? '-'}`,
          `  moto:           AWS_ENDPOINT_URL=${env.aws.endpoint}`,
          'test runs reuse it until `npm run env:down`',
          '',
        ].join('\n'),
      );
      return;
    }
    case 'down': {
      if (live) await stopEnvironment(live, { keepFiles: false });
      await rm(file, { force: true });
      process.stdout.write(live ? 'environment stopped\n' : 'no environment was up\n');
      return;
    }
    case 'status':
      process.stdout.write(live ? `${JSON.stringify(live, null, 2)}\n` : 'no environment is up\n');
      return;
    default:
      process.stderr.write('usage: tsx test/env/cli.ts up|down|status\n');
      process.exitCode = 2;
  }
}

main(process.argv[2]).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
