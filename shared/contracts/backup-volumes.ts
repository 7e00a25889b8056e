/**
 * The volume side of a backup's working data: the settings ValidateBackup resolves for the
 * workers (resource policy, legacy volume fields, timeouts), what each worker records of the
 * volumes of one ItemBlock (their facts, the decision taken, the snapshot it started), the
 * progress VolumeOperations keeps while it waits, and that state's output. Parsed wherever it is
 * read back from the object store; never holds object contents beyond names, labels and ids.
 */
import { z } from 'zod';
import { resourcePolicySchema } from './resource-policy.js';

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

/** VolumeOperations' record of every operation and where it stands; rewritten on each poll. */
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
});
export type VolumeOperationsOutcome = z.infer<typeof volumeOperationsOutcome>;
