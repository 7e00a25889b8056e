/**
 * What the restore state machine's steps pass each other: the run, the plan (phases and the
 * indexes of their item chunks, never the items), one chunk to restore and each chunk's outcome.
 */
import { z } from 'zod';
import { validationOutcomeOf } from './kubernetes.js';

export const restoreRun = z.strictObject({
  name: z.string(),
  backupName: z.string(),
  cluster: z.string(),
  runId: z.string(),
  startedAt: z.string(),
  dryRun: z.boolean(),
});
export type RestoreRun = z.infer<typeof restoreRun>;

export const restoreValidation = validationOutcomeOf(restoreRun);
export type RestoreValidation = z.infer<typeof restoreValidation>;

export const plannedItem = z.strictObject({
  groupResource: z.string(),
  /** As in the backup, before mapping. */
  sourceNamespace: z.string(),
  object: z.record(z.string(), z.unknown()),
  /** The backed-up status, kept only when it is to be written back after create (`restoreStatus`). */
  status: z.unknown().optional(),
  /** Resource modifier rules that failed on the item: restored anyway, each counted as an error (Velero). */
  problems: z.array(z.string()).optional(),
});
export type PlannedItem = z.infer<typeof plannedItem>;

export const restorePhase = z.strictObject({
  index: z.number().int(),
  groupResource: z.string(),
  chunks: z.number().int(),
  items: z.number().int(),
  /** 0 … chunks-1: the inner Map runs one RestorePhase invocation per entry. */
  chunkIndexes: z.array(z.number().int().nonnegative()),
});
export type RestorePhase = z.infer<typeof restorePhase>;

/** What one RestorePhase invocation restores: one chunk of one phase. */
export const restoreChunk = z.strictObject({
  run: restoreRun,
  phase: restorePhase.pick({ index: true, groupResource: true }),
  chunk: z.number().int().nonnegative(),
});
export type RestoreChunk = z.infer<typeof restoreChunk>;

/** A chunk's counts: all that comes back to the state machine (outcomes stay in the store). */
export const chunkTotals = z.strictObject({
  created: z.number().int(),
  updated: z.number().int(),
  skipped: z.number().int(),
  failed: z.number().int(),
});
export type ChunkTotals = z.infer<typeof chunkTotals>;

export const restorePlan = z.strictObject({
  dryRun: z.boolean(),
  /** Volumes RestoreVolumes re-creates from native snapshots before the phases. */
  nativeVolumes: z.number().int().nonnegative().optional(),
  /** Re-provisioned PVs PatchProvisionedVolumes gives their backed-up reclaim policy and labels. */
  provisionedVolumes: z.number().int().nonnegative().optional(),
  phases: z.array(restorePhase),
  totalItems: z.number().int(),
  skipped: z.number().int(),
  /** Dry runs only: what would happen to each item, in order. */
  preview: z
    .array(
      z.strictObject({
        phase: z.string(),
        item: z.string(),
        action: z.enum(['create', 'update', 'skip']),
        reason: z.string().optional(),
      }),
    )
    .optional(),
});
export type RestorePlan = z.infer<typeof restorePlan>;

export const itemOutcome = z.strictObject({
  apiVersion: z.string(),
  kind: z.string(),
  namespace: z.string(),
  name: z.string(),
  result: z.enum(['created', 'updated', 'failed', 'skipped']),
  message: z.string().optional(),
});
export type ItemOutcome = z.infer<typeof itemOutcome>;
