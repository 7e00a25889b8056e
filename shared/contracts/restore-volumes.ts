/**
 * What the restore's volume steps keep in the working data and return to the state machine:
 * the volume plan PlanRestore writes (volumes to re-create from native snapshots, re-provisioned
 * PVs to patch, the restore volume info known at planning, notes for the log), the progress of
 * RestoreVolumes and PatchProvisionedVolumes, and the counts they return. Also the backup's
 * volumes-info as read back from the store: Velero's keys, unknown ones ignored.
 */
import * as z from 'zod';
import { dataMoverJob } from './data-mover-job.js';

const logEvent = z.strictObject({
  time: z.string(),
  level: z.enum(['debug', 'info', 'warning', 'error']),
  msg: z.string(),
  fields: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
});

const pvInfo = z.object({
  reclaimPolicy: z.string().catch(''),
  labels: z.record(z.string(), z.string()).nullable().catch(null),
});

const csiSnapshotInfo = z.object({
  snapshotHandle: z.string().catch(''),
  size: z.number().catch(0),
  driver: z.string().catch(''),
  vscName: z.string().catch(''),
  operationID: z.string().optional(),
  ReadyToUse: z.boolean().nullable().catch(null),
});

const nativeSnapshotInfo = z.object({
  snapshotHandle: z.string().catch(''),
  volumeType: z.string().catch(''),
  volumeAZ: z.string().catch(''),
  iops: z.union([z.string(), z.number().transform(String)]).catch('0'),
  Phase: z.enum(['New', 'InProgress', 'Completed', 'Failed', '']).catch(''),
});

const snapshotDataMovementInfo = z.object({
  dataMover: z.string().catch(''),
  uploaderType: z.string().catch(''),
  retainedSnapshot: z.string().optional().catch(undefined),
  snapshotHandle: z.string().catch(''),
  operationID: z.string().catch(''),
  size: z.number().catch(0),
  Phase: z.string().catch(''),
});

const pvbInfo = z.object({
  snapshotHandle: z.string().optional().catch(undefined),
  size: z.number().optional().catch(undefined),
  uploaderType: z.string().catch(''),
  volumeName: z.string().catch(''),
  podName: z.string().catch(''),
  podNamespace: z.string().catch(''),
  nodeName: z.string().optional().catch(undefined),
  Phase: z.string().catch(''),
});

/** Lifeboat's record of a snapshot's copy (`copySnapshots`); an unreadable one reads as failed. */
const snapshotCopyInfo = z.object({
  account: z.string().optional().catch(undefined),
  region: z.string().catch(''),
  snapshotHandle: z.string().catch(''),
  sourceSnapshotHandle: z.string().catch(''),
  kmsKeyId: z.string().optional().catch(undefined),
  startTimestamp: z.string().optional().catch(undefined),
  completionTimestamp: z.string().optional().catch(undefined),
  Phase: z.enum(['New', 'InProgress', 'Completed', 'Failed']).catch('Failed'),
  error: z.string().optional().catch(undefined),
  backupAccount: z.string().optional().catch(undefined),
});

/**
 * One entry of `<backup>-volumeinfo.json.gz` as a restore reads it (Velero BackupVolumeInfo).
 * Lenient where Velero is: a field of the wrong type reads as its zero value, never fails the
 * restore; the methods Lifeboat does not know read as none (the volume is then treated as
 * skipped, as Velero's default branch does).
 */
export const backupVolumeInfoRecord = z.object({
  pvcName: z.string().optional().catch(undefined),
  pvcNamespace: z.string().optional().catch(undefined),
  pvName: z.string().optional().catch(undefined),
  backupMethod: z.enum(['NativeSnapshot', 'PodVolumeBackup', 'CSISnapshot']).optional().catch(undefined),
  snapshotDataMoved: z.boolean().catch(false),
  preserveLocalSnapshot: z.boolean().catch(false),
  skipped: z.boolean().catch(false),
  skippedReason: z.string().optional().catch(undefined),
  csiSnapshotInfo: csiSnapshotInfo.optional().catch(undefined),
  nativeSnapshotInfo: nativeSnapshotInfo.optional().catch(undefined),
  snapshotDataMovementInfo: snapshotDataMovementInfo.optional().catch(undefined),
  pvbInfo: pvbInfo.optional().catch(undefined),
  pvInfo: pvInfo.optional().catch(undefined),
  snapshotCopies: z.array(snapshotCopyInfo).optional().catch(undefined),
});
export const backupVolumeInfos = z.array(backupVolumeInfoRecord);

const restoreVolumeInfo = z.object({
  pvcName: z.string().optional(),
  pvcNamespace: z.string().optional(),
  pvName: z.string().optional(),
  restoreMethod: z.enum(['NativeSnapshot', 'PodVolumeBackup', 'CSISnapshot', 'PodVolumeRestore']).optional(),
  snapshotDataMoved: z.boolean(),
  csiSnapshotInfo: csiSnapshotInfo.optional(),
  nativeSnapshotInfo: nativeSnapshotInfo.optional(),
  snapshotDataMovementInfo: snapshotDataMovementInfo.optional(),
  pvrInfo: pvbInfo.optional(),
});

/**
 * A volume re-created before the phases: from a native snapshot, or, with `movedData`, written
 * by the data mover from the repository (a block-restore job).
 */
export const nativeVolumeRestore = z.strictObject({
  pvName: z.string(),
  sourcePvName: z.string(),
  pvcNamespace: z.string().optional(),
  pvcName: z.string().optional(),
  snapshotHandle: z.string(),
  volumeType: z.string(),
  iops: z.number().int().positive().optional(),
  availabilityZone: z.string(),
  recordedAvailabilityZone: z.string(),
  movedData: z
    .strictObject({
      manifestId: z.string(),
      backupMethod: z.enum(['NativeSnapshot', 'CSISnapshot']),
      info: snapshotDataMovementInfo,
    })
    .optional(),
});

export const provisionedVolume = z.strictObject({
  pvcNamespace: z.string(),
  pvcName: z.string(),
  sourcePvName: z.string().optional(),
  pvInfo,
  /** Files the data mover backed up (fs-backup): a file-restore job into the new volume. */
  files: z.strictObject({ manifestId: z.string(), podName: z.string(), volumeName: z.string() }).optional(),
});

/** `work.volumes`: written once by PlanRestore. */
export const volumePlan = z.strictObject({
  native: z.array(nativeVolumeRestore),
  provisioned: z.array(provisionedVolume),
  restoreInfos: z.array(restoreVolumeInfo),
  /** The plan's own notes (Velero's PV handling lines, skipped data, refused volumes). */
  log: z.array(logEvent),
});
export type VolumePlan = z.infer<typeof volumePlan>;

/** How a native volume ended: its new volume id, or why there is none. */
const nativeOutcome = z.strictObject({
  volumeId: z.string().optional(),
  state: z.string().optional(),
  error: z.string().optional(),
});

/** A volume the data mover restores from the repository: its job, until the job ran. */
const volumeMove = z.strictObject({
  jobId: z.string(),
  state: z.enum(['Ready', 'Completed', 'Failed']),
  job: dataMoverJob.optional(),
  snapshotId: z.string().optional(),
  blocksWritten: z.number().int().nonnegative().optional(),
});

/** `work.volumesProgress`: RestoreVolumes' state between its calls. */
export const volumesProgress = z.strictObject({
  startedAt: z.string(),
  /** By restored PV name. */
  volumes: z.record(z.string(), nativeOutcome),
  /** Volumes restored from the repository, by restored PV name. */
  moves: z.record(z.string(), volumeMove).optional(),
  /** Set once every volume settled and the PV chunks point at the new volumes. */
  done: z.boolean(),
  log: z.array(logEvent),
});
export type VolumesProgress = z.infer<typeof volumesProgress>;

/** `work.provisionedProgress`: PatchProvisionedVolumes' state between its calls. */
export const provisionedProgress = z.strictObject({
  startedAt: z.string(),
  /** `namespace/name` of each settled PVC (patched, nothing to do, or given up on). */
  settled: z.array(z.string()),
  /** File restores into re-provisioned volumes, by `namespace/name` of the PVC. */
  files: z.record(z.string(), volumeMove).optional(),
  done: z.boolean(),
  log: z.array(logEvent),
});
export type ProvisionedProgress = z.infer<typeof provisionedProgress>;

/** What RestoreVolumes and PatchProvisionedVolumes return: whether, and after how long, to call again. */
export const volumeStepResult = z.strictObject({
  done: z.boolean(),
  pending: z.number().int().nonnegative(),
  /** The state machine's wait before the next call (Wait state, whole seconds). */
  waitSeconds: z.number().int().nonnegative(),
  /** RestoreVolumes: data-mover jobs to run now (the RestoreVolumeData Map), a bounded batch. */
  moveJobs: z.array(dataMoverJob).optional(),
});
export type VolumeStepResult = z.infer<typeof volumeStepResult>;
