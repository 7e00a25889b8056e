/**
 * How a Schedule's backups are named and labelled, as Velero's schedule controller makes them
 * (getBackup, Schedule.TimestampedName, builder FromSchedule): `<schedule>-<yyyyMMddHHmmss>` in
 * UTC, the label `velero.io/schedule-name`, the template's labels over the Schedule's own, and the
 * Schedule's annotations. Pure.
 */

/** Velero's label naming the Schedule a backup came from (restore --from-schedule reads it). */
export const SCHEDULE_NAME_LABEL = 'velero.io/schedule-name';

/** `<schedule>-<yyyyMMddHHmmss>`, the time in UTC (Go's `20060102150405`). */
export function scheduledBackupName(schedule: string, at: Date): string {
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  const stamp =
    pad(at.getUTCFullYear(), 4) +
    pad(at.getUTCMonth() + 1) +
    pad(at.getUTCDate()) +
    pad(at.getUTCHours()) +
    pad(at.getUTCMinutes()) +
    pad(at.getUTCSeconds());
  return `${schedule}-${stamp}`;
}

export interface ScheduledBackupMeta {
  readonly name: string;
  readonly namespace?: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

/**
 * A scheduled backup's metadata: the Schedule's labels, then `velero.io/schedule-name`, then the
 * template's `metadata.labels` (Velero applies them last, so they win), and the Schedule's
 * annotations.
 */
export function scheduledBackupMeta(options: {
  readonly schedule: {
    readonly name: string;
    readonly namespace?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly templateLabels?: Readonly<Record<string, string>>;
  readonly at: Date;
}): ScheduledBackupMeta {
  const { schedule } = options;
  const labels = { ...schedule.labels, [SCHEDULE_NAME_LABEL]: schedule.name, ...options.templateLabels };
  return {
    name: scheduledBackupName(schedule.name, options.at),
    ...(schedule.namespace ? { namespace: schedule.namespace } : {}),
    labels,
    ...(schedule.annotations && Object.keys(schedule.annotations).length > 0
      ? { annotations: { ...schedule.annotations } }
      : {}),
  };
}
