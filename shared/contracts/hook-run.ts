/**
 * What the hook runner (a Fargate task started by `ecs:runTask.sync`; locally a child process)
 * is asked to do, passed as JSON in its `LIFEBOAT_HOOK_RUN` environment variable: back up one
 * ItemBlock a worker left for it because its hooks may outlast a Lambda, or run one recipe hook
 * step whose commands may — of a backup's workflow, or of a restore's (`restore`: the restore run).
 */
import * as z from 'zod';
import { backupRun } from './backup-run.js';
import { recipeStepRef } from './recipe-run.js';
import { restoreRecipeHookInput, restoreRun } from './restore-run.js';

/** `<messageId>/<blockId>`, as the ItemBlocks wait lists deferred blocks. */
const deferredBlockId = z.string().regex(/^[^/]+\/[^/]+$/, { message: 'must be <messageId>/<blockId>' });

export const hookRunInput = z.union([
  z.strictObject({ run: backupRun, block: deferredBlockId }),
  z.strictObject({ run: backupRun, step: recipeStepRef }),
  z.strictObject({ restore: restoreRun, step: restoreRecipeHookInput.shape.step }),
]);
export type HookRunInput = z.infer<typeof hookRunInput>;

/** The environment variable carrying the input (the state machine's container override). */
export const HOOK_RUN_VARIABLE = 'LIFEBOAT_HOOK_RUN';
