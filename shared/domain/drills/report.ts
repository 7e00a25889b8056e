/**
 * A DR drill's report: what was restored from which backup, every mismatch between the backup's
 * resource list and the target cluster, the workloads waited on, the volumes and how they came
 * back, and the two figures a DR plan is judged by: RPO, the age of the backup when the drill
 * started (the data the drill could not bring back is at most that old), and RTO, the time from
 * the drill's start until everything it restored was ready. Also the readable summary the CLI
 * prints. Pure: the times and findings are given.
 */

export type DrillPhase = 'InProgress' | 'Completed' | 'Failed';

/** One item that is not as the backup has it. `problem` names keys or fields, never values. */
export interface DrillMismatch {
  /** `apps/v1/Deployment shop/web` (target namespace). */
  readonly item: string;
  readonly problem: 'missing' | 'different' | 'not ready' | 'unreadable';
  readonly detail: string;
}

/** A volume as the restore brought it back (from the restore's volume info). */
export interface DrillVolume {
  readonly pvc: string;
  readonly method: string;
  readonly source?: string;
}

export interface DrillReport {
  readonly name: string;
  readonly phase: DrillPhase;
  readonly cluster: string;
  readonly backup: { readonly name: string; readonly startedAt: string; readonly schedule?: string };
  readonly restore: { readonly name: string; readonly phase: string; readonly failure?: string };
  readonly namespaceMapping: Readonly<Record<string, string>>;
  readonly startedAt: string;
  readonly completedAt?: string;
  /** When every restored workload was ready; absent when they never all were. */
  readonly readyAt?: string;
  readonly rpoSeconds: number;
  readonly rtoSeconds?: number;
  readonly items: { readonly checked: number; readonly notChecked: number; readonly waitedOn: number };
  readonly mismatches: readonly DrillMismatch[];
  readonly volumes: readonly DrillVolume[];
  /** Why the drill failed, in a line, when it did. */
  readonly failureReason?: string;
  /** The Schedule whose drill target fired this drill; absent for a drill a person started. */
  readonly firedBySchedule?: string;
}

const seconds = (from: string, to: string): number =>
  Math.max(0, Math.round((Date.parse(to) - Date.parse(from)) / 1000));

/** RPO: the backup's age at the drill's start. */
export function recoveryPointSeconds(options: { backupStartedAt: string; drillStartedAt: string }): number {
  return seconds(options.backupStartedAt, options.drillStartedAt);
}

/** The finished report: its phase and RTO from the findings. */
export function finishedReport(options: {
  readonly started: Omit<DrillReport, 'phase' | 'mismatches' | 'volumes' | 'items' | 'rpoSeconds'>;
  readonly rpoSeconds: number;
  readonly items: DrillReport['items'];
  readonly mismatches: readonly DrillMismatch[];
  readonly volumes: readonly DrillVolume[];
  readonly readyAt?: string;
  /** Whether the drill got as far as waiting for readiness (not when its restore failed). */
  readonly waited: boolean;
  /** Why a check could not be made, when one could not. */
  readonly checkFailure?: string;
  /** Why the restore never started (an earlier drill's namespaces not cleared), when it did not. */
  readonly clearFailure?: string;
  readonly completedAt: string;
}): DrillReport {
  const { started, mismatches } = options;
  const restoreFailed = started.restore.phase !== 'Completed';
  const reasons = [
    ...(options.clearFailure ? [`nothing was restored: ${options.clearFailure}`] : []),
    ...(restoreFailed && !options.clearFailure
      ? [
          `restore ${started.restore.name} ended ${started.restore.phase}${started.restore.failure ? `: ${started.restore.failure}` : ''}`,
        ]
      : []),
    ...(options.checkFailure ? [`the drill's checks failed: ${options.checkFailure}`] : []),
    ...(mismatches.length > 0 ? [`${mismatches.length} mismatch${mismatches.length > 1 ? 'es' : ''}`] : []),
    ...(options.readyAt || !options.waited ? [] : ['not everything was ready in time']),
  ];
  return {
    ...started,
    phase: reasons.length === 0 ? 'Completed' : 'Failed',
    completedAt: options.completedAt,
    ...(options.readyAt
      ? { readyAt: options.readyAt, rtoSeconds: seconds(started.startedAt, options.readyAt) }
      : {}),
    rpoSeconds: options.rpoSeconds,
    items: options.items,
    mismatches,
    volumes: options.volumes,
    ...(reasons.length > 0 ? { failureReason: reasons.join('; ') } : {}),
  };
}

/** `1h 2m 3s`. */
export function humanDuration(totalSeconds: number): string {
  const h = Math.floor(totalSeconds / 3600);
  const m = Math.floor((totalSeconds % 3600) / 60);
  const s = totalSeconds % 60;
  return [h ? `${h}h` : '', h || m ? `${m}m` : '', `${s}s`].filter(Boolean).join(' ');
}

/** The readable summary: a few lines, then one per mismatch and per volume. */
export function drillSummary(report: DrillReport): string[] {
  const mapping = Object.entries(report.namespaceMapping).map(([from, to]) => `${from}→${to}`);
  return [
    `Drill "${report.name}": ${report.phase}${report.failureReason ? ` (${report.failureReason})` : ''}`,
    ...(report.firedBySchedule ? [`  Fired by:   schedule ${report.firedBySchedule}`] : []),
    `  Backup:     ${report.backup.name}${report.backup.schedule ? ` (schedule ${report.backup.schedule})` : ''}, started ${report.backup.startedAt}`,
    `  Restore:    ${report.restore.name}: ${report.restore.phase}, into cluster ${report.cluster}${mapping.length ? `, namespaces ${mapping.join(', ')}` : ''}`,
    `  RPO:        ${humanDuration(report.rpoSeconds)} (the backup's age when the drill started)`,
    `  RTO:        ${report.rtoSeconds === undefined ? 'not reached (not everything was ready)' : `${humanDuration(report.rtoSeconds)} (drill start to everything ready)`}`,
    `  Items:      ${report.items.checked} checked, ${report.items.waitedOn} waited on, ${report.items.notChecked} left to the cluster's controllers`,
    `  Mismatches: ${report.mismatches.length}`,
    ...report.mismatches.map((m) => `    ${m.item}: ${m.problem}${m.detail ? ` (${m.detail})` : ''}`),
    `  Volumes:    ${report.volumes.length}`,
    ...report.volumes.map((v) => `    ${v.pvc}: ${v.method}${v.source ? ` from ${v.source}` : ''}`),
  ];
}
