/**
 * The `velero-backup.json` document: a `velero.io/v1` Backup with its final status, as Velero's
 * sync controller reads it. Written last, as the commit marker of a backup.
 */
import { FORMAT_VERSION } from './tarball-layout.js';

/** Velero's backup phases (1.18): Lifeboat writes FailedValidation, InProgress, Completed, PartiallyFailed, Failed. */
export const BACKUP_PHASES = [
  'New',
  'Queued',
  'ReadyToStart',
  'FailedValidation',
  'InProgress',
  'WaitingForPluginOperations',
  'WaitingForPluginOperationsPartiallyFailed',
  'Finalizing',
  'FinalizingPartiallyFailed',
  'Completed',
  'PartiallyFailed',
  'Failed',
  'Deleting',
] as const;

export type BackupPhase = (typeof BACKUP_PHASES)[number];

export interface BackupStatus {
  readonly version: number;
  readonly formatVersion: string;
  readonly phase: BackupPhase;
  readonly expiration: string;
  readonly startTimestamp: string;
  readonly completionTimestamp?: string;
  readonly progress?: { readonly totalItems: number; readonly itemsBackedUp: number };
  readonly errors?: number;
  readonly warnings?: number;
  readonly failureReason?: string;
  readonly validationErrors?: readonly string[];
  /** Velero's volume counters (omitempty: absent when zero). */
  readonly volumeSnapshotsAttempted?: number;
  readonly volumeSnapshotsCompleted?: number;
  readonly csiVolumeSnapshotsAttempted?: number;
  readonly csiVolumeSnapshotsCompleted?: number;
  readonly backupItemOperationsAttempted?: number;
  readonly backupItemOperationsCompleted?: number;
  readonly backupItemOperationsFailed?: number;
  /** Velero: set once a hook was attempted (omitempty). */
  readonly hookStatus?: { readonly hooksAttempted?: number; readonly hooksFailed?: number };
}

export interface BackupDocument {
  readonly apiVersion: 'velero.io/v1';
  readonly kind: 'Backup';
  readonly metadata: {
    readonly name: string;
    readonly namespace: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly creationTimestamp: string;
  };
  readonly spec: Readonly<Record<string, unknown>>;
  readonly status: BackupStatus;
}

export type VolumeCounter =
  | 'volumeSnapshotsAttempted'
  | 'volumeSnapshotsCompleted'
  | 'csiVolumeSnapshotsAttempted'
  | 'csiVolumeSnapshotsCompleted'
  | 'backupItemOperationsAttempted'
  | 'backupItemOperationsCompleted'
  | 'backupItemOperationsFailed';

/** The annotation naming the cluster a backup is of (Lifeboat's; Velero backs up its own). */
export const CLUSTER_ANNOTATION = 'lifeboat.io/cluster';

/** Velero's timestamps are RFC 3339 with second precision. */
export function rfc3339(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

export function backupDocument(options: {
  name: string;
  labels?: Readonly<Record<string, string>>;
  annotations?: Readonly<Record<string, string>>;
  spec: Readonly<Record<string, unknown>>;
  startedAt: Date;
  completedAt?: Date;
  expiration: Date;
  phase: BackupPhase;
  totalItems?: number;
  itemsBackedUp?: number;
  errors?: number;
  warnings?: number;
  failureReason?: string;
  validationErrors?: readonly string[];
  /** Volume snapshot and item operation counts, each left out when zero. */
  volumeCounters?: Readonly<Record<VolumeCounter, number>>;
  hookStatus?: { readonly hooksAttempted: number; readonly hooksFailed: number };
}): BackupDocument {
  const status: BackupStatus = {
    version: 1,
    formatVersion: FORMAT_VERSION,
    phase: options.phase,
    expiration: rfc3339(options.expiration),
    startTimestamp: rfc3339(options.startedAt),
    ...(options.completedAt ? { completionTimestamp: rfc3339(options.completedAt) } : {}),
    ...(options.totalItems !== undefined
      ? { progress: { totalItems: options.totalItems, itemsBackedUp: options.itemsBackedUp ?? 0 } }
      : {}),
    ...(options.errors ? { errors: options.errors } : {}),
    ...(options.warnings ? { warnings: options.warnings } : {}),
    ...(options.failureReason ? { failureReason: options.failureReason } : {}),
    ...(options.validationErrors?.length ? { validationErrors: options.validationErrors } : {}),
    ...Object.fromEntries(Object.entries(options.volumeCounters ?? {}).filter(([, n]) => n > 0)),
    ...(options.hookStatus
      ? {
          // Velero sets hookStatus on every backup it runs; its fields are omitempty.
          hookStatus: {
            ...(options.hookStatus.hooksAttempted
              ? { hooksAttempted: options.hookStatus.hooksAttempted }
              : {}),
            ...(options.hookStatus.hooksFailed ? { hooksFailed: options.hookStatus.hooksFailed } : {}),
          },
        }
      : {}),
  };
  return {
    apiVersion: 'velero.io/v1',
    kind: 'Backup',
    metadata: {
      name: options.name,
      namespace: 'velero',
      ...(options.labels ? { labels: options.labels } : {}),
      ...(options.annotations ? { annotations: options.annotations } : {}),
      creationTimestamp: rfc3339(options.startedAt),
    },
    spec: options.spec,
    status,
  };
}

/** Velero's resource list: `{"apps/v1/Deployment": ["ns/name", …]}`, keys and lists sorted. */
export function resourceList(
  items: readonly { apiVersion: string; kind: string; namespace: string; name: string }[],
): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const item of items) {
    const key = `${item.apiVersion}/${item.kind}`;
    const list = out[key] ?? [];
    list.push(item.namespace ? `${item.namespace}/${item.name}` : item.name);
    out[key] = list;
  }
  return Object.fromEntries(
    Object.keys(out)
      .sort()
      .map((k) => [k, [...new Set(out[k])].sort()]),
  );
}
