/**
 * Recognises an object that an earlier attempt of the same restore wrote, so that a retried
 * RestorePhase chunk reports it as the earlier attempt did (created or updated) rather than as
 * found existing. Pure: never reads the cluster itself.
 */

/** Objects created at most this long before the restore started still count as created by it (clock skew). */
const CLOCK_SKEW_MS = 60_000;

/**
 * `created` or `updated` when the existing object carries this restore's
 * `velero.io/restore-name` label (Velero labels every object it restores; restore names are
 * never reused, so only this restore can have put it there); otherwise undefined. Created when
 * the cluster created the object after the restore started, updated when it is older.
 */
export function earlierAttempt(options: {
  existing: Readonly<Record<string, unknown>>;
  restoreName: string;
  startedAt: string;
}): 'created' | 'updated' | undefined {
  const meta = (options.existing.metadata ?? {}) as {
    labels?: Record<string, unknown>;
    creationTimestamp?: unknown;
  };
  if (meta.labels?.['velero.io/restore-name'] !== options.restoreName) return undefined;
  const created = Date.parse(String(meta.creationTimestamp ?? ''));
  const started = Date.parse(options.startedAt);
  if (Number.isNaN(created) || Number.isNaN(started)) return 'created';
  return created >= started - CLOCK_SKEW_MS ? 'created' : 'updated';
}
