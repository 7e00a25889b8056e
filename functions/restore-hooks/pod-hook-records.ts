/**
 * The working data that tells RestoreHooks which pods have hooks to run: one small key per pod
 * this restore created with post-restore exec hooks (or hook warnings), written by RestorePhase
 * right after the chunk's items are restored. Velero starts a pod's exec hooks only after it
 * created the pod (restore.go: not for a pod found existing, skipped or updated). Never reads
 * the cluster; a retried chunk rewrites the same keys.
 */
import pLimit from 'p-limit';
import type {
  ItemOutcome,
  PlannedItem,
  PodHooksRecord,
  RestoreRun,
} from '../../shared/contracts/restore-run.js';
import { restoreWorkKeys } from '../../shared/domain/storage/keys.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';

/** Writes a hooks record for every created pod of the chunk that has hooks. `outcomes[i]` is `items[i]`'s. */
export async function recordPodHooks(options: {
  store: ObjectStore;
  run: RestoreRun;
  items: readonly PlannedItem[];
  outcomes: readonly ItemOutcome[];
  signal?: AbortSignal;
}): Promise<number> {
  const work = restoreWorkKeys(options.run);
  const records: PodHooksRecord[] = [];
  for (const [i, item] of options.items.entries()) {
    if (item.groupResource !== 'pods') continue;
    if (!item.execHooks?.length && !item.hookWarnings?.length) continue;
    const outcome = options.outcomes[i];
    if (outcome?.result !== 'created') continue;
    records.push({
      namespace: outcome.namespace,
      name: outcome.name,
      execHooks: item.execHooks ?? [],
      warnings: item.hookWarnings ?? [],
    });
  }
  const limit = pLimit(16);
  await Promise.all(
    records.map((record) =>
      limit(() =>
        options.store.put(work.podHooks(record.namespace, record.name), JSON.stringify(record), {
          contentType: 'application/json',
          ...(options.signal ? { signal: options.signal } : {}),
        }),
      ),
    ),
  );
  return records.length;
}

/** `<namespace>/<name>` of a pod from one of its hook keys under `dir`, or undefined. */
export function podOfKey(options: { key: string; dir: string; suffix: string }): string | undefined {
  const { key, dir, suffix } = options;
  if (!key.startsWith(dir) || !key.endsWith(suffix)) return undefined;
  const id = key.slice(dir.length, key.length - suffix.length);
  return /^[^/]+\/[^/]+$/.test(id) ? id : undefined;
}
