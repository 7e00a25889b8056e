/**
 * A backed-up volume's data movement as the backup's results record it: its outcome for the
 * volumes-info, and its record in the item operations file (Velero: the DataUpload's operation).
 * Pure: reads the workers' records and VolumeOperations' facts; never decides whether a
 * failed movement fails the backup (backup-results.ts does).
 */
import { DATA_MOVER_ACTION, type DataMovementFacts, movementKeyOf } from './data-movement.js';
import { type DataMovementOutcome, kubeTime } from './info.js';
import type { BackupOperation } from './operations.js';
import type { HandledVolumeFacts } from './worker-records.js';

export interface MovedVolume {
  readonly mode: 'block' | 'file';
  readonly phase: DataMovementOutcome['phase'];
  readonly error?: string;
  readonly facts?: DataMovementFacts;
  readonly outcome: DataMovementOutcome;
}

/**
 * The data movement of a volume the backup asked to move (snapshotMoveData with a snapshot
 * started, or fs-backup with its files reachable): as VolumeOperations recorded it, or failed
 * when it never got that far.
 */
export function movedBy(
  h: HandledVolumeFacts,
  movements: ReadonlyMap<string, DataMovementFacts>,
): MovedVolume | undefined {
  const file = h.decision.action === 'fs-backup' && h.files !== undefined;
  const block = h.decision.action === 'snapshot' && h.decision.moveData && h.operation !== undefined;
  if (!file && !block) return undefined;
  const facts = movements.get(movementKeyOf(h));
  const settled = facts?.state === 'Completed' || facts?.state === 'Failed';
  const phase = facts?.state === 'Completed' ? 'Completed' : 'Failed';
  const error = settled ? facts?.error : 'the data mover never ran for it';
  const pod = h.decision.action === 'fs-backup' ? h.decision.pod : undefined;
  return {
    mode: file ? 'file' : 'block',
    phase,
    ...(phase === 'Failed' ? { error: error ?? 'failed' } : {}),
    ...(facts ? { facts } : {}),
    outcome: {
      mode: file ? 'file' : 'block',
      phase,
      operationId: facts?.jobId ?? '',
      manifestId: phase === 'Completed' ? (facts?.manifestId ?? '') : '',
      size: facts?.size ?? 0,
      ...(facts?.retainedSnapshot ? { retainedSnapshot: facts.retainedSnapshot } : {}),
      ...(facts?.started ? { startedAt: facts.started } : {}),
      ...(facts?.updated && phase === 'Completed' ? { completedAt: facts.updated } : {}),
      ...(pod
        ? {
            pod: {
              namespace: pod.namespace,
              name: pod.name,
              volumeName: pod.volumeName,
              ...(h.files?.nodeName ? { nodeName: h.files.nodeName } : {}),
            },
          }
        : {}),
    },
  };
}

/** The item operations file's record of a data movement (Velero: the DataUpload's operation). */
export function dataMovementOperationOf(options: {
  backupName: string;
  backupUID: string;
  h: HandledVolumeFacts;
  moved: MovedVolume;
}): BackupOperation {
  const { h, moved } = options;
  const facts = moved.facts;
  const resource = h.pvcName
    ? { Group: '', Resource: 'persistentvolumeclaims', Namespace: h.pvcNamespace ?? '', Name: h.pvcName }
    : { Group: '', Resource: 'persistentvolumes', Namespace: '', Name: h.pvName ?? '' };
  const status = Object.fromEntries(
    Object.entries({
      phase: moved.phase,
      error: moved.error,
      nCompleted: facts?.bytesDone,
      nTotal: facts?.size,
      operationUnits: 'Bytes',
      description: facts?.state,
      created: facts ? kubeTime(facts.created) : undefined,
      started: facts?.started ? kubeTime(facts.started) : undefined,
      updated: facts?.updated ? kubeTime(facts.updated) : undefined,
      // Go's omitempty drops zero numbers and empty strings.
    }).filter(([, v]) => v !== undefined && v !== '' && v !== 0),
  ) as BackupOperation['status'];
  return {
    spec: {
      backupName: options.backupName,
      backupUID: options.backupUID,
      backupItemAction: DATA_MOVER_ACTION,
      ResourceIdentifier: resource,
      OperationID: facts?.jobId ?? '',
      PostOperationItems: null,
    },
    status,
  };
}
