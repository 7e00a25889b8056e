/**
 * Vitest global setup of the integration project: reuses an environment kept up with
 * `npm run env:up` when one is alive, otherwise starts one for this run and stops it, by the
 * PIDs it started, when the run ends.
 */
import type { TestProject } from 'vitest/node';
import { ensureTools } from './ensure-tools.js';
import {
  loadLiveEnvironment,
  startEnvironment,
  stopEnvironment,
  type TestEnvironment,
} from './environment.js';
import { persistentEnvFile } from './versions.js';

declare module 'vitest' {
  export interface ProvidedContext {
    lifeboatEnv: TestEnvironment;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const kept = await loadLiveEnvironment(persistentEnvFile());
  if (kept) {
    process.stderr.write(`[env] reusing the environment kept up in ${kept.rootDir}\n`);
    project.provide('lifeboatEnv', kept);
    return undefined;
  }
  const tools = await ensureTools();
  const started = Date.now();
  const env = await startEnvironment({ tools, withDrCluster: false, persistent: false });
  process.stderr.write(
    `[env] cluster and moto ready in ${((Date.now() - started) / 1000).toFixed(1)} s (${env.rootDir})\n`,
  );
  project.provide('lifeboatEnv', env);
  return async () => {
    await stopEnvironment(env, { keepFiles: false });
  };
}
