/**
 * The recipe a backup names (docs/recipes.md), resolved once, before anything is collected: the
 * inline document, or the one data key of a ConfigMap read from the backed-up cluster (in the
 * namespace given, else the Backup's, else `velero`). Every problem is named by its field path
 * (FailedValidation); a cluster that cannot be reached for now is a RetryableError the state
 * machine retries. Also reads the recipe back from the working data for the later steps.
 * Reads one ConfigMap; never logs its contents.
 */
import type { BackupRequest } from '../../shared/contracts/backup-request.js';
import { decodeYaml, onlyDataEntry } from '../../shared/contracts/configmap-document.js';
import type { ValidationResult } from '../../shared/contracts/kubernetes.js';
import { type Recipe, validateRecipe } from '../../shared/contracts/recipe.js';
import { storedRecipe } from '../../shared/contracts/recipe-run.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import { backupWorkKeys } from '../../shared/domain/storage-keys.js';
import type { ClusterWriter } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { readRequestConfigMap } from '../read-configmap.js';

/** Velero's install namespace, where a Backup (and so its recipe ConfigMap) lives by default. */
export const DEFAULT_RECIPE_NAMESPACE = 'velero';

export interface ResolvedRecipe {
  readonly recipe: Recipe;
  /** What the working data keeps: the document as decoded, and where it came from. */
  readonly stored: { readonly document: unknown; readonly source: string };
}

function withBackupWorkflow(checked: ValidationResult<Recipe>, path: string): ValidationResult<Recipe> {
  if (!checked.ok || checked.value.workflows.backup) return checked;
  return {
    ok: false,
    problems: [
      { path: `${path}.workflows.backup`, message: 'a backup needs the recipe to have a backup workflow' },
    ],
  };
}

export async function resolveRecipe(
  request: BackupRequest,
  deps: { cluster?: Pick<ClusterWriter, 'read'>; signal?: AbortSignal },
): Promise<ValidationResult<ResolvedRecipe> | undefined> {
  const ref = request.backup.spec.recipe;
  if (!ref) return undefined;
  if ('inline' in ref) {
    const path = 'backup.spec.recipe.inline';
    const checked = withBackupWorkflow(validateRecipe(ref.inline, path), path);
    return checked.ok
      ? { ok: true, value: { recipe: checked.value, stored: { document: ref.inline, source: 'inline' } } }
      : checked;
  }
  const namespace = ref.configMap.namespace ?? request.backup.metadata.namespace ?? DEFAULT_RECIPE_NAMESPACE;
  const { name } = ref.configMap;
  const where = `backup.spec.recipe(ConfigMap ${namespace}/${name})`;
  if (!deps.cluster) throw new LifeboatError('the recipe ConfigMap cannot be read without the cluster');
  const cluster = deps.cluster;
  const read = await readRequestConfigMap({
    cluster: async () => cluster,
    namespace,
    name,
    path: where,
    namePath: where,
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  if (!read.ok) return read;
  const configMap = read.value;
  const entry = onlyDataEntry(
    { namespace, name, data: configMap.data as Record<string, string> | undefined },
    (at, keys) => `the recipe ConfigMap ${at} must have exactly one data key, it has ${keys}`,
  );
  const prefixed = (problems: readonly { path: string; message: string }[]) =>
    problems.map((p) => ({ path: `${where}.${p.path}`, message: p.message }));
  if (!entry.ok) return { ok: false, problems: prefixed(entry.problems) };
  const decoded = decodeYaml(entry.value.text, entry.value.prefix);
  if (!decoded.ok) return { ok: false, problems: prefixed(decoded.problems) };
  const checked = withBackupWorkflow(validateRecipe(decoded.value, entry.value.prefix), entry.value.prefix);
  if (!checked.ok) return { ok: false, problems: prefixed(checked.problems) };
  return {
    ok: true,
    value: {
      recipe: checked.value,
      stored: { document: decoded.value, source: `ConfigMap ${namespace}/${name}` },
    },
  };
}

/** The recipe CollectRecipeItems kept for this run, validated again. */
export async function readRecipe(options: {
  run: { name: string; runId: string };
  store: ObjectStore;
  signal?: AbortSignal;
}): Promise<Recipe> {
  const raw = await options.store.get(backupWorkKeys(options.run).recipe, { signal: options.signal });
  if (!raw)
    throw new LifeboatError(`the recipe of backup ${options.run.name} is missing from the working data`);
  const { document } = storedRecipe.parse(JSON.parse(Buffer.from(raw).toString('utf8')));
  const checked = validateRecipe(document);
  if (!checked.ok)
    throw new LifeboatError(`the stored recipe of backup ${options.run.name} is no longer valid`);
  return checked.value;
}
