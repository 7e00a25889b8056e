/**
 * The volume side of a backup's working data: the settings ValidateBackup resolves for the
 * workers (resource policy, legacy volume fields, timeouts), what each worker records of the
 * volumes of one ItemBlock (their facts, the decision taken, the snapshot it started), the
 * progress VolumeOperations keeps while it waits (snapshots, then data movements), and that
 * state's input and output. Parsed wherever it is
 * read back from the object store; never holds object contents beyond names, labels and ids.
 */

import * as z from 'zod';
import { dataMoverJob } from './data-mover-job.js';
import { resourcePolicySchema } from './resource-policy.js';
import { copySnapshotTarget } from './snapshot-copies.js';

/** What ValidateBackup resolves once for every worker and for VolumeOperations. */
export const volumeSettings = z.strictObject({
  /** The backed-up cluster's name (CSI snapshots are created in it). */
  cluster: z.string(),
  /** The resource policy (inline or from its ConfigMap), already validated; null when none. */
  policy: resourcePolicySchema.nullable(),
  snapshotVolumes: z.boolean().nullable(),
  defaultVolumesToFsBackup: z.boolean().nullable(),
  snapshotMoveData: z.boolean().nullable(),
  /** The backup's labels: every native snapshot carries them as tags (Velero). */
  backupLabels: z.record(z.string(), z.string()),
  /** The backup's annotations (`velero.io/csi-volumesnapshot-class_<driver>` chooses a class). */
  backupAnnotations: z.record(z.string(), z.string()),
  csiSnapshotTimeoutSeconds: z.number().int().positive(),
  itemOperationTimeoutSeconds: z.number().int().positive(),
  /** Lifeboat's copySnapshots: where each completed EBS snapshot is copied. */
  copySnapshots: z.array(copySnapshotTarget).optional(),
});
export type VolumeSettings = z.infer<typeof volumeSettings>;

const podVolumeRef = z.strictObject({ namespace: z.string(), name: z.string(), volumeName: z.string() });
const policyIndex = { policyIndex: z.number().int().nonnegative().optional() };

/** The domain's VolumeDecision, as recorded. */
export const volumeDecision = z.discriminatedUnion('action', [
  z.strictObject({
    action: z.literal('skip'),
    approach: z.enum(['podvolume', 'csiSnapshot', 'volumeSnapshot', 'any']),
    reason: z.string(),
    ...policyIndex,
  }),
  z.strictObject({
    action: z.literal('snapshot'),
    method: z.enum(['csi', 'native']),
    ebsVolumeId: z.string().optional(),
    moveData: z.boolean(),
    moveDataRefused: z.string().optional(),
    reason: z.string(),
    ...policyIndex,
  }),
  z.strictObject({ action: z.literal('fs-backup'), pod: podVolumeRef, reason: z.string(), ...policyIndex }),
]);

/** Velero's ResourceIdentifier: Go field names without json tags (Group, Resource, Namespace, Name). */
export const resourceIdentifier = z.strictObject({
  Group: z.string(),
  Resource: z.string(),
  Namespace: z.string(),
  Name: z.string(),
});
export type ResourceIdentifier = z.infer<typeof resourceIdentifier>;

const nativeSnapshotStart = z.strictObject({
  volumeId: z.string(),
  volumeType: z.string(),
  iops: z.number().int().optional(),
  availabilityZone: z.string(),
  /** Absent when CreateSnapshot was refused (then `error` says why). */
  snapshotId: z.string().optional(),
  /** Volume tags left off the snapshot (reserved `aws:` keys, beyond EC2's 50). */
  droppedTags: z.array(z.string()).optional(),
});

const csiSnapshotStart = z.strictObject({
  volumeSnapshotNamespace: z.string(),
  /** Absent when the VolumeSnapshot could not be created (then `error` says why). */
  volumeSnapshotName: z.string().optional(),
  driver: z.string(),
  className: z.string().optional(),
});

/** An asynchronous volume operation a worker started: VolumeOperations waits on it. */
export const volumeOperation = z.strictObject({
  /** Velero's OperationID: the EBS snapshot id; `<ns>/<volumesnapshot>/<RFC 3339 time>` for CSI. */
  operationId: z.string(),
  method: z.enum(['native', 'csi']),
  backupItemAction: z.string(),
  resource: resourceIdentifier,
  postOperationItems: z.array(resourceIdentifier),
  createdAt: z.string(),
});
export type VolumeOperation = z.infer<typeof volumeOperation>;

/** What the backup did with one PVC/PV (or pod volume) of a block. */
export const handledVolumeRecord = z.strictObject({
  pvName: z.string().optional(),
  pvcNamespace: z.string().optional(),
  pvcName: z.string().optional(),
  decision: volumeDecision,
  native: nativeSnapshotStart.optional(),
  csi: csiSnapshotStart.optional(),
  /** Why the chosen snapshot could not be started; the volume's result is `failed`. */
  error: z.string().optional(),
  startedAt: z.string().optional(),
  operation: volumeOperation.optional(),
  /** fs-backup: the directory the data mover reads the volume's files from, and the pod's node. */
  files: z.strictObject({ path: z.string(), nodeName: z.string().optional() }).optional(),
  /** fs-backup: why the data mover cannot reach the volume's files (the volume is skipped). */
  filesUnreachable: z.string().optional(),
});
export type HandledVolumeRecord = z.infer<typeof handledVolumeRecord>;

/** One ItemBlock's volumes, written by the worker next to its message result. */
export const blockVolumes = z.strictObject({
  claims: z.array(
    z.strictObject({ namespace: z.string(), name: z.string(), volumeName: z.string().optional() }),
  ),
  persistentVolumes: z.array(
    z.strictObject({
      name: z.string(),
      claim: z.strictObject({ namespace: z.string(), name: z.string() }).optional(),
      reclaimPolicy: z.string().optional(),
      labels: z.record(z.string(), z.string()).optional(),
    }),
  ),
  handled: z.array(handledVolumeRecord),
});
export type BlockVolumes = z.infer<typeof blockVolumes>;

export const operationPhase = z.enum(['New', 'InProgress', 'Completed', 'Failed']);

/** Velero's OperationStatus (itemoperation/shared.go), plus what the result needs of the snapshot. */
export const operationStatus = z.strictObject({
  phase: operationPhase,
  error: z.string().optional(),
  nCompleted: z.number().optional(),
  nTotal: z.number().optional(),
  operationUnits: z.string().optional(),
  description: z.string().optional(),
  created: z.string().optional(),
  started: z.string().optional(),
  updated: z.string().optional(),
  /** CSI: the bound VolumeSnapshotContent, once known. */
  csi: z
    .strictObject({
      vscName: z.string().optional(),
      snapshotHandle: z.string().optional(),
      size: z.number().optional(),
      driver: z.string().optional(),
      readyToUse: z.boolean().nullable().optional(),
    })
    .optional(),
});
export type OperationStatus = z.infer<typeof operationStatus>;

/**
 * One volume's data movement (snapshotMoveData: a block backup of its EBS snapshot; fs-backup: a
 * file backup of its directory), as VolumeOperations keeps it between calls.
 */
export const dataMovement = z.strictObject({
  /** movementKeyOf the worker's volume record. */
  key: z.string(),
  /** The data-mover job id, which is also the manifest id. */
  jobId: z.string(),
  mode: z.enum(['block', 'file']),
  state: z.enum(['Waiting', 'Ready', 'Completed', 'Failed']),
  created: z.string(),
  started: z.string().optional(),
  updated: z.string().optional(),
  error: z.string().optional(),
  /** The job, once it can start (Ready): what the state machine hands to the data mover. */
  job: dataMoverJob.optional(),
  parentManifestId: z.string().optional(),
  /** The EBS snapshot the parent manifest's backup kept: deleted once this movement completed. */
  supersedes: z.string().optional(),
  manifestId: z.string().optional(),
  size: z.number().nonnegative().optional(),
  bytesDone: z.number().nonnegative().optional(),
  bytesRead: z.number().nonnegative().optional(),
  storedBytes: z.number().nonnegative().optional(),
  incremental: z.boolean().optional(),
  retainedSnapshot: z.string().optional(),
  /** What became of `supersedes` (a line of the backup log). */
  note: z.strictObject({ level: z.enum(['info', 'warning']), message: z.string() }).optional(),
});
export type DataMovement = z.infer<typeof dataMovement>;

/** VolumeOperations' record of every operation and where it stands; rewritten on each poll. */
/** One snapshot's copy to one target, as VolumeOperations follows it. */
export const snapshotCopy = z.strictObject({
  target: copySnapshotTarget,
  sourceSnapshotHandle: z.string(),
  snapshotHandle: z.string(),
  Phase: z.enum(['New', 'InProgress', 'Completed', 'Failed']),
  startTimestamp: z.string().optional(),
  completionTimestamp: z.string().optional(),
  error: z.string().optional(),
  /** An account-less copy's owner: the backup's own account, as EC2 reported it. */
  backupAccount: z.string().optional(),
});
export type SnapshotCopy = z.infer<typeof snapshotCopy>;

export const volumeOperationsProgress = z.strictObject({
  attempt: z.string(),
  polls: z.number().int().nonnegative(),
  operations: z.array(
    z.strictObject({
      operation: volumeOperation,
      status: operationStatus,
      /**
       * CSI, once every operation settled: the VolumeSnapshot and its content removed from the
       * cluster (the storage snapshot kept), or why they were left; a line of the backup log.
       */
      cleanup: z
        .strictObject({ time: z.string(), level: z.enum(['info', 'warning']), message: z.string() })
        .optional(),
    }),
  ),
  /** Data movements, gathered with the operations (fs-backup ones have no operation). */
  movements: z.array(dataMovement).optional(),
  /** Copies of completed EBS snapshots (copySnapshots), started as their snapshots complete. */
  copies: z.array(snapshotCopy).optional(),
});
export type VolumeOperationsProgress = z.infer<typeof volumeOperationsProgress>;

/** What VolumeOperations returns to the state machine (small: counts, never lists). */
export const volumeOperationsOutcome = z.strictObject({
  done: z.boolean(),
  total: z.number().int().nonnegative(),
  completed: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  pending: z.number().int().nonnegative(),
  /** How long the state machine waits before the next poll. */
  waitSeconds: z.number().int().nonnegative(),
  /** Data-mover jobs to run now (the state machine's MoveVolumeData Map); a bounded batch. */
  moveJobs: z.array(dataMoverJob),
});

/** VolumeOperations' input: the run, and the jobs the last MoveVolumeData ran (and how each ended). */
export const volumeOperationsInput = z.object({
  run: z.unknown(),
  moved: z
    .array(z.object({ jobId: z.string(), error: z.string().optional() }))
    .optional()
    .catch(undefined),
});
export type VolumeOperationsOutcome = z.infer<typeof volumeOperationsOutcome>;
