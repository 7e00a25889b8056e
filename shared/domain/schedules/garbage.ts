/**
 * What a garbage collection run deletes, and why, as Velero's GC controller decides it plus
 * Lifeboat's retention: a backup whose expiration has passed (`expired`), or one a retention
 * policy of its Schedule does not keep (`not kept by retention`). Never chosen, with the reason
 * shown: a backup still in progress or being deleted (Velero skips both), and one S3 Object
 * Lock retains past now (it could not be deleted). Pure: the use case deletes.
 */
import { isRestorable, type RetainedBackup, type RetentionPolicy, retainedBy } from './retention.js';

export interface GarbageCandidate extends RetainedBackup {
  readonly expiration?: Date;
  /** The Schedule it came from (its `velero.io/schedule-name` label). */
  readonly schedule?: string;
  /** A deletion of it is running. */
  readonly deleting: boolean;
  /** Its Object Lock retention ends then, if it has one. */
  readonly retainedUntil?: Date;
}

export interface ScheduleRetention {
  readonly policy: RetentionPolicy;
  readonly timeZone: string;
}

export interface GarbageDecision {
  readonly delete: readonly { readonly name: string; readonly reasons: readonly string[] }[];
  readonly skipped: readonly { readonly name: string; readonly reason: string }[];
}

/** Phases of a backup that has not ended. */
const UNFINISHED: ReadonlySet<string> = new Set([
  'New',
  'Queued',
  'ReadyToStart',
  'InProgress',
  'WaitingForPluginOperations',
  'WaitingForPluginOperationsPartiallyFailed',
  'Finalizing',
  'FinalizingPartiallyFailed',
]);

export function selectGarbage(options: {
  readonly backups: readonly GarbageCandidate[];
  /** Retention policies by Schedule name. */
  readonly retention: ReadonlyMap<string, ScheduleRetention>;
  readonly now: Date;
}): GarbageDecision {
  const { backups, now } = options;
  const notKept = notKeptByRetention(backups, options.retention);
  const chosen: { name: string; reasons: string[] }[] = [];
  const skipped: { name: string; reason: string }[] = [];
  for (const backup of [...backups].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const reasons: string[] = [];
    if (backup.expiration && backup.expiration.getTime() <= now.getTime())
      reasons.push(`expired at ${backup.expiration.toISOString()}`);
    const retention = notKept.get(backup.name);
    if (retention) reasons.push(retention);
    if (reasons.length === 0) continue;
    const reason = skipReason(backup, now);
    if (reason) skipped.push({ name: backup.name, reason });
    else chosen.push({ name: backup.name, reasons });
  }
  return { delete: chosen, skipped };
}

function skipReason(backup: GarbageCandidate, now: Date): string | undefined {
  if (backup.deleting || backup.phase === 'Deleting') return 'a deletion of it is running';
  if (UNFINISHED.has(backup.phase)) return `it is still in progress (${backup.phase})`;
  if (backup.retainedUntil && backup.retainedUntil.getTime() > now.getTime())
    return `S3 Object Lock retains it until ${backup.retainedUntil.toISOString()}`;
  return undefined;
}

/** Each restorable backup of a Schedule with a policy that the policy does not keep, and why. */
function notKeptByRetention(
  backups: readonly GarbageCandidate[],
  retention: ReadonlyMap<string, ScheduleRetention>,
): Map<string, string> {
  const reasons = new Map<string, string>();
  for (const [schedule, { policy, timeZone }] of retention) {
    const own = backups.filter((b) => b.schedule === schedule && isRestorable(b.phase) && !b.deleting);
    const kept = retainedBy({ policy, backups: own, timeZone });
    const rules = Object.entries(policy)
      .filter(([, n]) => typeof n === 'number')
      .map(([rule, n]) => `${rule} ${n}`)
      .join(', ');
    for (const b of own) {
      if (!kept.has(b.name))
        reasons.set(b.name, `not kept by the retention of schedule ${schedule} (${rules})`);
    }
  }
  return reasons;
}
