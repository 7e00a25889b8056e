/**
 * A backup's files as read back from a storage location, which another Velero (or anyone with
 * write access) may have written: `velero-backup.json` (a Backup with the fields Lifeboat reads
 * typed, Velero's other fields kept as they are, and the timestamps and version Velero leaves out
 * as empty), the resource list, the results and the item operations. A file that is not what it
 * should be says which field is wrong (shared/adapters/stored-file-reader.ts).
 */
import * as z from 'zod';
import { BACKUP_PHASES, type BackupDocument } from '../domain/storage/backup-document.js';
import type { Results } from '../domain/storage/results.js';
import type { BackupOperation } from '../domain/volumes/operations.js';

const requiredObject = (what: string) => ({
  error: (issue: { input?: unknown }) =>
    issue.input === undefined ? `is missing: ${what}` : `must be an object: ${what}`,
});
const strings = z.record(z.string(), z.string());
const count = z.number().int().nonnegative();

const status = z.looseObject(
  {
    version: z.number().default(1),
    formatVersion: z.string().default(''),
    phase: z.enum(BACKUP_PHASES, {
      error: (issue) =>
        issue.input === undefined
          ? 'is missing: a backup says its phase'
          : `must be one of Velero's backup phases (${BACKUP_PHASES.join(', ')})`,
    }),
    expiration: z.string().default(''),
    startTimestamp: z.string().default(''),
    completionTimestamp: z.string().optional(),
    progress: z.looseObject({ totalItems: count, itemsBackedUp: count }).optional(),
    errors: count.optional(),
    warnings: count.optional(),
    failureReason: z.string().optional(),
    validationErrors: z.array(z.string()).optional(),
    volumeSnapshotsAttempted: count.optional(),
    volumeSnapshotsCompleted: count.optional(),
    csiVolumeSnapshotsAttempted: count.optional(),
    csiVolumeSnapshotsCompleted: count.optional(),
    backupItemOperationsAttempted: count.optional(),
    backupItemOperationsCompleted: count.optional(),
    backupItemOperationsFailed: count.optional(),
    hookStatus: z.looseObject({ hooksAttempted: count.optional(), hooksFailed: count.optional() }).optional(),
  },
  requiredObject("the backup's status, with its phase"),
);

export const storedBackupDocument = z.looseObject({
  apiVersion: z.literal('velero.io/v1', { error: 'must be velero.io/v1' }),
  kind: z.literal('Backup', { error: 'must be Backup' }),
  metadata: z.looseObject(
    {
      name: z.string({ error: 'is missing: the backup’s name' }).min(1),
      namespace: z.string().default('velero'),
      labels: strings.optional(),
      annotations: strings.optional(),
      creationTimestamp: z.string().default(''),
    },
    requiredObject("the backup's metadata, with its name"),
  ),
  spec: z.record(z.string(), z.unknown(), { error: 'must be an object' }).default({}),
  status,
}) satisfies z.ZodType<BackupDocument, unknown>;

export const STORED_BACKUP_SHAPE = 'a velero.io/v1 Backup';

/** Velero's resource list: `{"apps/v1/Deployment": ["ns/name", …]}`. */
export const storedResourceList = z.record(z.string(), z.array(z.string()));

const result = z.looseObject({
  velero: z.array(z.string()).optional(),
  cluster: z.array(z.string()).optional(),
  namespaces: z.record(z.string(), z.array(z.string())).optional(),
});

/** Velero's results file: errors and warnings, each by scope. */
export const storedResults = z.looseObject({
  errors: result.default({}),
  warnings: result.default({}),
}) satisfies z.ZodType<Results, unknown>;

const resourceIdentifier = z.looseObject({
  Group: z.string().default(''),
  Resource: z.string().default(''),
  Namespace: z.string().default(''),
  Name: z.string().default(''),
});

/** Velero's item operations file: what `backup describe --details` shows of each. */
export const storedItemOperations = z.array(
  z.looseObject({
    spec: z.looseObject({
      backupName: z.string().default(''),
      backupUID: z.string().default(''),
      backupItemAction: z.string().default(''),
      ResourceIdentifier: resourceIdentifier,
      OperationID: z.string().default(''),
      PostOperationItems: z.array(resourceIdentifier).nullable().default(null),
    }),
    status: z.looseObject({
      phase: z.enum(['New', 'InProgress', 'Completed', 'Failed']),
      error: z.string().optional(),
      nCompleted: z.number().optional(),
      nTotal: z.number().optional(),
      operationUnits: z.string().optional(),
      description: z.string().optional(),
      created: z.string().optional(),
      started: z.string().optional(),
      updated: z.string().optional(),
    }),
  }),
) satisfies z.ZodType<BackupOperation[], unknown>;
