/**
 * What the restore state machine's steps pass each other: the run, the plan (phases and the
 * indexes of their item chunks, never the items), one chunk to restore and each chunk's outcome;
 * and what they keep in the working data: planned items, restored pods' hooks and their outcomes.
 */
import * as z from 'zod';
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

/** A post-restore exec hook settled for a pod (shared/domain/restore-hooks PodRestoreExecHook). */
export const restoreExecHook = z.strictObject({
  hookName: z.string(),
  source: z.enum(['annotation', 'spec', 'recipe']),
  phase: z.enum(['pre', 'post']),
  container: z.string(),
  command: z.array(z.string()),
  onError: z.enum(['Continue', 'Fail']),
  timeoutMs: z.number().int().positive(),
  waitTimeoutMs: z.number().int().positive().optional(),
  waitForReady: z.boolean(),
  invalid: z.string().optional(),
});

/** A container's post-restore exec hooks, in the order they run. */
export const containerHooks = z.strictObject({
  container: z.string(),
  hooks: z.array(restoreExecHook),
});
export type ContainerHooks = z.infer<typeof containerHooks>;

export const plannedItem = z.strictObject({
  groupResource: z.string(),
  /** As in the backup, before mapping. */
  sourceNamespace: z.string(),
  object: z.record(z.string(), z.unknown()),
  /** The backed-up status, kept only when it is to be written back after create (`restoreStatus`). */
  status: z.unknown().optional(),
  /** Resource modifier rules that failed on the item: restored anyway, each counted as an error (Velero). */
  problems: z.array(z.string()).optional(),
  /** What planning found odd and corrected (an object placed at its archive path): warnings of the item. */
  warnings: z.array(z.string()).optional(),
  /** Pods: the init containers their restore hooks put in, in order (already in `object`). */
  initContainersAdded: z.array(z.string()).optional(),
  /** Pods: the post-restore exec hooks to run once the pod is created, by container. */
  execHooks: z.array(containerHooks).optional(),
  /** Pods: hook annotations that were ignored and hooks dropped, one sentence each. */
  hookWarnings: z.array(z.string()).optional(),
});
export type PlannedItem = z.infer<typeof plannedItem>;

/**
 * A pod this restore created that has exec hooks (or hook warnings), written by RestorePhase
 * under its own key so that RestoreHooks lists pods rather than reading one growing list.
 */
export const podHooksRecord = z.strictObject({
  namespace: z.string(),
  name: z.string(),
  execHooks: z.array(containerHooks),
  warnings: z.array(z.string()),
});
export type PodHooksRecord = z.infer<typeof podHooksRecord>;

const logEvent = z.strictObject({
  time: z.string(),
  level: z.enum(['debug', 'info', 'warning', 'error']),
  msg: z.string(),
  fields: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
});

/** How one exec hook of a restored pod ended. */
export const restoreHookRun = z.strictObject({
  container: z.string(),
  /** Position in its container's list. */
  index: z.number().int().nonnegative(),
  hookName: z.string(),
  source: z.enum(['annotation', 'spec', 'recipe']),
  status: z.enum(['succeeded', 'failed']),
  /** Failed only: executed (the command failed), expired (its wait timeout passed first) or not executed. */
  failure: z
    .strictObject({ kind: z.enum(['execution', 'expired', 'notExecuted']), message: z.string() })
    .optional(),
  exitCode: z.number().int().optional(),
  durationMs: z.number().optional(),
});
export type RestoreHookRun = z.infer<typeof restoreHookRun>;

/** A pod's hooks so far (progress) or all settled (done): the runs and their restore log lines. */
export const podHooksOutcome = z.strictObject({
  namespace: z.string(),
  name: z.string(),
  runs: z.array(restoreHookRun),
  /** An earlier hook failed with onError Fail: the remaining ones are not executed. */
  stopped: z.boolean(),
  log: z.array(logEvent),
});
export type PodHooksOutcome = z.infer<typeof podHooksOutcome>;

/** What RestoreHooks returns to the state machine: counts only. */
export const restoreHooksProgress = z.strictObject({
  /** Pods whose hooks are not all settled yet: the state machine waits and calls again. */
  pending: z.number().int().nonnegative(),
  /** How long the state machine waits before the next call (Wait state, whole seconds). */
  waitSeconds: z.number().int().nonnegative(),
  /** Pods whose hooks are all settled. */
  settled: z.number().int().nonnegative(),
});
export type RestoreHooksProgress = z.infer<typeof restoreHooksProgress>;

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
  /**
   * The step's retries are spent (the state machine's Catch): an item the cluster still refuses
   * with 429/5xx is recorded as failed, naming it, instead of failing the chunk again.
   */
  lastAttempt: z.boolean().optional(),
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

/** One step of a recipe's restore workflow, as PlanRestore laid it out (docs/recipes.md). */
export const restoreRecipeStep = z.strictObject({
  index: z.number().int().nonnegative(),
  kind: z.enum(['group', 'hook']),
  name: z.string(),
  /** A group step's items, as phases of their own (indexes unique over the whole restore); [] for a hook. */
  phases: z.array(restorePhase),
  /** A hook step whose commands may take longer than a Lambda: the hook runner runs it. */
  long: z.boolean(),
  items: z.number().int().nonnegative(),
});
export type RestoreRecipeStep = z.infer<typeof restoreRecipeStep>;

/** What a recipe hook step (RunRestoreRecipeHook) is given: the run and the step. */
export const restoreRecipeHookInput = z.object({
  run: restoreRun,
  step: restoreRecipeStep.pick({ index: true, name: true }),
});
export type RestoreRecipeHookInput = z.infer<typeof restoreRecipeHookInput>;

/** What RunRestoreRecipeHook returns: whether the step is settled, else how long to wait. */
export const restoreRecipeHookProgress = z.strictObject({
  done: z.boolean(),
  waitSeconds: z.number().int().nonnegative(),
  attempted: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
});
export type RestoreRecipeHookProgress = z.infer<typeof restoreRecipeHookProgress>;

/** A recipe hook step while it waits or runs: when it began and, once found, its pods. */
export const restoreRecipeHookState = z.strictObject({
  startedAt: z.string(),
  pods: z.array(podHooksRecord).optional(),
  log: z.array(logEvent),
});
export type RestoreRecipeHookState = z.infer<typeof restoreRecipeHookState>;

/** A recipe hook step settled: its log, each pod's hooks, the errors beside them, and its verdict. */
export const restoreRecipeHookResult = z.strictObject({
  step: z.number().int().nonnegative(),
  hook: z.string(),
  log: z.array(logEvent),
  pods: z.array(podHooksOutcome),
  /** Problems that are no pod's hook run (no pod selected): restore errors, by namespace when known. */
  errors: z.array(z.strictObject({ namespace: z.string().optional(), message: z.string() })),
  warnings: z.array(z.string()),
  /** A hook with onError Fail failed: the workflow stops after this step. */
  stopsWorkflow: z.boolean(),
});
export type RestoreRecipeHookResult = z.infer<typeof restoreRecipeHookResult>;

export const restorePlan = z.strictObject({
  dryRun: z.boolean(),
  /** Volumes RestoreVolumes re-creates from native snapshots before the phases. */
  nativeVolumes: z.number().int().nonnegative().optional(),
  /** Re-provisioned PVs PatchProvisionedVolumes gives their backed-up reclaim policy and labels. */
  provisionedVolumes: z.number().int().nonnegative().optional(),
  phases: z.array(restorePhase),
  totalItems: z.number().int(),
  skipped: z.number().int(),
  /** A restore that follows a recipe: its workflow's steps (`phases` is then empty). */
  recipe: z
    .strictObject({
      steps: z.array(restoreRecipeStep),
      /** Backed-up items the request selects that no restore group takes: not restored. */
      notInRecipe: z.number().int().nonnegative(),
    })
    .optional(),
  /** Parts of the request that restore nothing (a namespace mapping, an includeItems entry). */
  warnings: z.array(z.string()).optional(),
  /** Dry runs only: what would happen to each item, in order. */
  preview: z
    .array(
      z.strictObject({
        phase: z.string(),
        item: z.string(),
        action: z.enum(['create', 'update', 'skip']),
        reason: z.string().optional(),
        /** A recipe restore: the workflow step that restores the item. */
        recipeStep: z.number().int().nonnegative().optional(),
        /** Pods to create: the init containers their restore hooks add, in order. */
        initContainers: z.array(z.string()).optional(),
        /** Pods to create: the exec hooks that would run once they are up. */
        execHooks: z
          .array(
            z.strictObject({ container: z.string(), hookName: z.string(), command: z.array(z.string()) }),
          )
          .optional(),
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
  /** Problems beside the result (a resource-modifier rule that failed, a status not restored). */
  errors: z.array(z.string()).optional(),
  warnings: z.array(z.string()).optional(),
});
export type ItemOutcome = z.infer<typeof itemOutcome>;
