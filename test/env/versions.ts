/**
 * Pinned versions and cache locations of the local test environment.
 * Everything here is test infrastructure; nothing in the product imports it.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';

export const KUBERNETES_VERSION = 'v1.34.10';
export const KWOK_MODULE = 'sigs.k8s.io/kwok';
export const KWOK_VERSION = 'v0.8.0';
/** Velero and its AWS plugin, paired as the plugin's compatibility table pairs them (test/env/velero). */
export const VELERO_VERSION = 'v1.18.3';
export const VELERO_AWS_PLUGIN_VERSION = 'v1.14.3';
export const MOTO_REQUIREMENT = 'moto[server]==5.2.5';

/** Built tools live outside the work tree so a fresh clone on the same machine reuses them. */
export function cacheRoot(): string {
  const explicit = process.env.LIFEBOAT_CACHE_DIR;
  if (explicit) return explicit;
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'lifeboat');
}

/** Where a running environment is described, so tests and `env:down` find it by its PIDs. */
export function persistentEnvFile(): string {
  return join(cacheRoot(), 'env', 'environment.json');
}
