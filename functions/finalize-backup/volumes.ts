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
import type { OperationStatus } from '../../shared/contracts/backup-volumes.js';
import type { LogEvent } from '../../shared/domain/storage/log.js';
import { emptyResults, mergeResults, type Results, resultOf } from '../../shared/domain/storage/results.js';
import { type BackupVolumeResults, backupVolumeResults } from '../../shared/domain/volumes/backup-results.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { readBlockVolumes, readVolumeProgress } from '../volume-operations/volume-operations.js';

export interface FinalizedVolumes extends BackupVolumeResults {
  readonly results: Results;
  readonly log: LogEvent[];
}

export async function finalizedVolumes(options: {
  run: BackupRun;
  store: ObjectStore;
  /** The CollectItems attempt whose results make the backup. */
  attempt: string;
  now: Date;
  signal?: AbortSignal;
}): Promise<FinalizedVolumes> {
  const { run, store, signal } = options;
  const blocks = await readBlockVolumes({
    run,
    store,
    attempt: options.attempt,
    ...(signal ? { signal } : {}),
  });
  const progress = await readVolumeProgress({ run, store, ...(signal ? { signal } : {}) });
  const statuses = new Map<string, OperationStatus>(
    progress?.attempt === options.attempt
      ? progress.operations.map((e) => [e.operation.operationId, e.status] as const)
      : [],
  );
  const movements = progress?.attempt === options.attempt ? (progress.movements ?? []) : [];
  const volumes = backupVolumeResults({
    backupName: run.name,
    // Lifeboat backups have no Kubernetes UID; the execution's id is unique to this backup run.
    backupUID: run.runId,
    location: 'default',
    blocks,
    statuses,
    movements: new Map(movements.map((m) => [m.key, m])),
  });
  const time = options.now.toISOString();
  const log: LogEvent[] = [];
  let results: Results = emptyResults;
  for (const failure of volumes.failures) {
    results = mergeResults(results, { errors: resultOf(failure), warnings: {} });
    log.push({ time, level: 'error', msg: failure.message, fields: { backup: run.name } });
  }
  for (const h of volumes.unmatched) {
    const msg = `volume record for ${h.pvcName ? `PVC ${h.pvcNamespace}/${h.pvcName}` : `PV ${h.pvName}`} names no PVC or PV of the backup`;
    results = mergeResults(results, { errors: {}, warnings: resultOf({ scope: 'velero', message: msg }) });
    log.push({ time, level: 'warning', msg, fields: { backup: run.name } });
  }
  // What VolumeOperations did with the CSI snapshots' VolumeSnapshots once all had settled.
  for (const { operation, cleanup } of progress?.attempt === options.attempt ? progress.operations : []) {
    if (!cleanup) continue;
    log.push({
      time: cleanup.time,
      level: cleanup.level,
      msg: cleanup.message,
      fields: {
        backup: run.name,
        namespace: operation.resource.Namespace,
        volumeSnapshot: operation.resource.Name,
      },
    });
    if (cleanup.level === 'warning') {
      const scope = { namespace: operation.resource.Namespace };
      results = mergeResults(results, {
        errors: {},
        warnings: resultOf({ scope, message: cleanup.message }),
      });
    }
  }
  for (const m of movements) {
    if (m.state === 'Completed')
      log.push({
        time: m.updated ?? time,
        level: 'info',
        msg: `Moved ${m.mode === 'block' ? `snapshot ${m.retainedSnapshot ?? ''}` : 'the files'} into the repository as manifest ${m.manifestId}`,
        fields: {
          backup: run.name,
          operation: m.jobId,
          incremental: m.incremental ?? false,
          ...(m.parentManifestId ? { parent: m.parentManifestId } : {}),
          bytesRead: m.bytesRead ?? 0,
          storedBytes: m.storedBytes ?? 0,
        },
      });
    if (!m.note) continue;
    log.push({
      time: m.updated ?? time,
      level: m.note.level,
      msg: m.note.message,
      fields: { backup: run.name },
    });
    if (m.note.level === 'warning')
      results = mergeResults(results, {
        errors: {},
        warnings: resultOf({ scope: 'velero', message: m.note.message }),
      });
  }
  const c = volumes.counters;
  if (c.backupItemOperationsAttempted > 0 || volumes.volumeInfos.length > 0) {
    log.push({
      time,
      level: 'info',
      msg: 'Volumes backed up',
      fields: {
        backup: run.name,
        volumes: volumes.volumeInfos.length,
        nativeSnapshots: `${c.volumeSnapshotsCompleted}/${c.volumeSnapshotsAttempted}`,
        csiSnapshots: `${c.csiVolumeSnapshotsCompleted}/${c.csiVolumeSnapshotsAttempted}`,
      },
    });
  }
  return { ...volumes, results, log };
}
