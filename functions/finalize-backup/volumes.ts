/**
 * The volume side files of a finished backup, from the blocks' volume records and the final
 * statuses VolumeOperations recorded: `-volumeinfo.json.gz` (exactly one entry per PVC/PV),
 * `-volumesnapshots.json.gz` (native snapshots), `-itemoperations.json.gz`, the status counters,
 * an error (with its log line) for every volume whose snapshot or data movement failed, so the
 * backup ends PartiallyFailed, and the lines (warnings when they failed) of the CSI
 * VolumeSnapshots' removal and of each data movement.
 * Reads only the working data; writes nothing itself.
 */
import type { BackupRun } from '../../shared/contracts/backup-run.js';
import type {
  BlockVolumes,
  DataMovement,
  OperationStatus,
  VolumeOperationsProgress,
} from '../../shared/contracts/backup-volumes.js';
import type { LogEvent } from '../../shared/domain/storage/log.js';
import { emptyResults, mergeResults, type Results, resultOf } from '../../shared/domain/storage/results.js';
import { type BackupVolumeResults, backupVolumeResults } from '../../shared/domain/volumes/backup-results.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { copyFailureMessage, withSnapshotCopies } from '../volume-operations/snapshot-copies.js';
import { readBlockVolumes, readVolumeProgress } from '../volume-operations/volume-operations.js';

export interface FinalizedVolumes extends BackupVolumeResults {
  readonly results: Results;
  readonly log: LogEvent[];
}

/** The volume lines of the backup log and the results they add, gathered in the order they are written. */
interface VolumeReport {
  readonly backupName: string;
  /** The time of the lines that have none of their own: when the backup finalized. */
  readonly time: string;
  readonly log: LogEvent[];
  results: Results;
}

/** The blocks' volume records, and what VolumeOperations recorded if it was for the same attempt. */
async function readAttemptVolumes(options: {
  run: BackupRun;
  store: ObjectStore;
  attempt: string;
  signal?: AbortSignal;
}): Promise<{ blocks: BlockVolumes[]; progress: VolumeOperationsProgress | undefined }> {
  const { run, store, signal } = options;
  const blocks = await readBlockVolumes({
    run,
    store,
    attempt: options.attempt,
    ...(signal ? { signal } : {}),
  });
  const progress = await readVolumeProgress({ run, store, ...(signal ? { signal } : {}) });
  return { blocks, progress: progress?.attempt === options.attempt ? progress : undefined };
}

/** An error for every volume that failed, a warning for every record naming no PVC or PV of the backup. */
function reportFailures(report: VolumeReport, volumes: BackupVolumeResults): void {
  const { time, backupName } = report;
  for (const failure of volumes.failures) {
    report.results = mergeResults(report.results, { errors: resultOf(failure), warnings: {} });
    report.log.push({ time, level: 'error', msg: failure.message, fields: { backup: backupName } });
  }
  for (const h of volumes.unmatched) {
    const msg = `volume record for ${h.pvcName ? `PVC ${h.pvcNamespace}/${h.pvcName}` : `PV ${h.pvName}`} names no PVC or PV of the backup`;
    report.results = mergeResults(report.results, {
      errors: {},
      warnings: resultOf({ scope: 'velero', message: msg }),
    });
    report.log.push({ time, level: 'warning', msg, fields: { backup: backupName } });
  }
}

/** What VolumeOperations did with the CSI snapshots' VolumeSnapshots once all had settled. */
function reportCsiCleanUps(report: VolumeReport, operations: VolumeOperationsProgress['operations']): void {
  for (const { operation, cleanup } of operations) {
    if (!cleanup) continue;
    report.log.push({
      time: cleanup.time,
      level: cleanup.level,
      msg: cleanup.message,
      fields: {
        backup: report.backupName,
        namespace: operation.resource.Namespace,
        volumeSnapshot: operation.resource.Name,
      },
    });
    if (cleanup.level === 'warning') {
      const scope = { namespace: operation.resource.Namespace };
      report.results = mergeResults(report.results, {
        errors: {},
        warnings: resultOf({ scope, message: cleanup.message }),
      });
    }
  }
}

/** A line for each completed data movement, and its note (a warning when its old base was kept). */
function reportMovements(report: VolumeReport, movements: readonly DataMovement[]): void {
  const { time, backupName } = report;
  for (const m of movements) {
    if (m.state === 'Completed')
      report.log.push({
        time: m.updated ?? time,
        level: 'info',
        msg: `Moved ${m.mode === 'block' ? `snapshot ${m.retainedSnapshot ?? ''}` : 'the files'} into the repository as manifest ${m.manifestId}`,
        fields: {
          backup: backupName,
          operation: m.jobId,
          incremental: m.incremental ?? false,
          ...(m.parentManifestId ? { parent: m.parentManifestId } : {}),
          bytesRead: m.bytesRead ?? 0,
          storedBytes: m.storedBytes ?? 0,
        },
      });
    if (!m.note) continue;
    report.log.push({
      time: m.updated ?? time,
      level: m.note.level,
      msg: m.note.message,
      fields: { backup: backupName },
    });
    if (m.note.level === 'warning')
      report.results = mergeResults(report.results, {
        errors: {},
        warnings: resultOf({ scope: 'velero', message: m.note.message }),
      });
  }
}

/** The closing line: how many volumes, and how many snapshots of each kind completed. */
function reportVolumeSummary(report: VolumeReport, volumes: BackupVolumeResults): void {
  const c = volumes.counters;
  if (c.backupItemOperationsAttempted > 0 || volumes.volumeInfos.length > 0) {
    report.log.push({
      time: report.time,
      level: 'info',
      msg: 'Volumes backed up',
      fields: {
        backup: report.backupName,
        volumes: volumes.volumeInfos.length,
        nativeSnapshots: `${c.volumeSnapshotsCompleted}/${c.volumeSnapshotsAttempted}`,
        csiSnapshots: `${c.csiVolumeSnapshotsCompleted}/${c.csiVolumeSnapshotsAttempted}`,
      },
    });
  }
}

export async function finalizedVolumes(options: {
  run: BackupRun;
  store: ObjectStore;
  /** The CollectItems attempt whose results make the backup. */
  attempt: string;
  now: Date;
  signal?: AbortSignal;
}): Promise<FinalizedVolumes> {
  const { run } = options;
  // `progress` is undefined when VolumeOperations last ran for another attempt.
  const { blocks, progress } = await readAttemptVolumes(options);
  const operations = progress ? progress.operations : [];
  const movements = progress ? (progress.movements ?? []) : [];
  const volumes = backupVolumeResults({
    backupName: run.name,
    // Lifeboat backups have no Kubernetes UID; the execution's id is unique to this backup run.
    backupUID: run.runId,
    location: 'default',
    blocks,
    statuses: new Map<string, OperationStatus>(operations.map((e) => [e.operation.operationId, e.status])),
    movements: new Map(movements.map((m) => [m.key, m])),
  });
  const report: VolumeReport = {
    backupName: run.name,
    time: options.now.toISOString(),
    log: [],
    results: emptyResults,
  };
  reportFailures(report, volumes);
  reportCsiCleanUps(report, operations);
  reportMovements(report, movements);
  reportVolumeSummary(report, volumes);
  const copies = progress?.copies ?? [];
  for (const copy of copies.filter((c) => c.Phase === 'Failed')) {
    const msg = copyFailureMessage(copy);
    report.results = mergeResults(report.results, {
      errors: resultOf({ scope: 'velero', message: msg }),
      warnings: {},
    });
    report.log.push({ time: report.time, level: 'error', msg, fields: { backup: run.name } });
  }
  const volumeInfos = withSnapshotCopies(volumes.volumeInfos, copies);
  return { ...volumes, volumeInfos, results: report.results, log: report.log };
}
