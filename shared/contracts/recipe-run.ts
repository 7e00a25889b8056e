/**
 * What the recipe states of the backup state machine pass each other (docs/recipes.md): the
 * steps of the recipe's backup workflow, each a Map iteration run one after the other, and the
 * recipe as kept in the working data. Payloads stay small: the steps carry names, not items.
 */
import * as z from 'zod';
import { backupRun } from './backup-run.js';

export const recipeStepRef = z.strictObject({
  index: z.number().int().nonnegative(),
  kind: z.enum(['group', 'hook']),
  name: z.string(),
  /** A hook step whose commands may take longer than a Lambda: the hook runner runs it. */
  long: z.boolean(),
  /** A group step's ItemBlock messages and items (0 for a hook step). */
  messages: z.number().int().nonnegative(),
  items: z.number().int().nonnegative(),
});
export type RecipeStepRef = z.infer<typeof recipeStepRef>;

/** CollectRecipeItems' outcome: the workflow's steps, or the recipe's problems (FailedValidation). */
export const recipeCollected = z.union([
  z.strictObject({ valid: z.literal(true), attempt: z.string(), steps: z.array(recipeStepRef) }),
  z.strictObject({
    valid: z.literal(false),
    problems: z.array(z.strictObject({ path: z.string(), message: z.string() })),
    summary: z.string(),
  }),
]);
export type RecipeCollected = z.infer<typeof recipeCollected>;

/** One Map iteration's input; `Payload` so that TimeoutSecondsPath resolves as for CollectItems. */
export const recipeStepInput = z.object({ run: backupRun, step: recipeStepRef });
export type RecipeStepInput = z.infer<typeof recipeStepInput>;

export const recipeGroupInput = recipeStepInput.extend({ taskToken: z.string().min(1) });

/** The recipe in the working data: the document as decoded, validated again when read. */
export const storedRecipe = z.strictObject({ document: z.unknown(), source: z.string() });
