/**
 * What the restore state machine's steps pass each other: the run, the plan (phases and the
 * keys of their item chunks, never the items) and each chunk's outcome.
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
});
export type PlannedItem = z.infer<typeof plannedItem>;

export const restorePhase = z.strictObject({
  index: z.number().int(),
  groupResource: z.string(),
  chunks: z.number().int(),
  items: z.number().int(),
});
export type RestorePhase = z.infer<typeof restorePhase>;

export const restorePlan = z.strictObject({
  dryRun: z.boolean(),
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
