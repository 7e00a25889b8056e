/**
 * The recipe a backup names (docs/recipes.md), resolved once, before anything is collected: the
 * inline document, or the one data key of a ConfigMap read from the backed-up cluster (in the
 * namespace given, else the Backup's, else `velero`), by functions/common/recipe-reference.ts. Also
 * reads the recipe back from the working data for the later steps. Never logs its contents.
 */
import type { BackupRequest } from '../../shared/contracts/backup-request.js';
import type { ValidationResult } from '../../shared/contracts/kubernetes.js';
import type { Recipe } from '../../shared/contracts/recipe.js';
import { backupWorkKeys } from '../../shared/domain/storage/keys.js';
import type { ClusterWriter } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { type ResolvedRecipe, readStoredRecipe, resolveRecipeReference } from '../common/recipe-reference.js';

export { DEFAULT_RECIPE_NAMESPACE, type ResolvedRecipe } from '../common/recipe-reference.js';

export async function resolveRecipe(
  request: BackupRequest,
  deps: { cluster?: Pick<ClusterWriter, 'read'>; signal?: AbortSignal },
): Promise<ValidationResult<ResolvedRecipe> | undefined> {
  const ref = request.backup.spec.recipe;
  if (!ref) return undefined;
  const { cluster } = deps;
  return resolveRecipeReference({
    ref,
    path: 'backup.spec.recipe',
    workflow: 'backup',
    ...(request.backup.metadata.namespace ? { requestNamespace: request.backup.metadata.namespace } : {}),
    ...(cluster ? { cluster: async () => cluster } : {}),
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
}

/** The recipe CollectRecipeItems kept for this run, validated again. */
export async function readRecipe(options: {
  run: { name: string; runId: string };
  store: ObjectStore;
  signal?: AbortSignal;
}): Promise<Recipe> {
  return readStoredRecipe({
    store: options.store,
    key: backupWorkKeys(options.run).recipe,
    of: `backup ${options.run.name}`,
    ...(options.signal ? { signal: options.signal } : {}),
  });
}
