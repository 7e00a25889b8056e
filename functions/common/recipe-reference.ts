/**
 * The recipe a backup or restore request names (docs/recipes.md), resolved once, before anything
 * runs: the inline document, or the one data key of a ConfigMap read from the request's cluster
 * (in the namespace given, else the request's, else `velero`). Every problem is named by its
 * field path (FailedValidation); a cluster that cannot be reached for now is a RetryableError the
 * state machine retries. Also reads a recipe back from the working data for the later steps.
 * Reads one ConfigMap; never logs its contents.
 */
import { decodeYaml, onlyDataEntry } from '../../shared/contracts/configmap-document.js';
import type { ValidationResult } from '../../shared/contracts/kubernetes.js';
import { type Recipe, type RecipeReference, validateRecipe } from '../../shared/contracts/recipe.js';
import { storedRecipe } from '../../shared/contracts/recipe-run.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { type ClusterReader, readRequestConfigMap } from './read-configmap.js';

/** Velero's install namespace, where a request (and so its recipe ConfigMap) lives by default. */
export const DEFAULT_RECIPE_NAMESPACE = 'velero';

export interface ResolvedRecipe {
  readonly recipe: Recipe;
  /** What the working data keeps: the document as decoded, and where it came from. */
  readonly stored: { readonly document: unknown; readonly source: string };
}

/** The workflow the request runs must be in the recipe. */
function withWorkflow(
  checked: ValidationResult<Recipe>,
  options: { path: string; workflow: 'backup' | 'restore' },
): ValidationResult<Recipe> {
  if (!checked.ok || checked.value.workflows[options.workflow]) return checked;
  return {
    ok: false,
    problems: [
      {
        path: `${options.path}.workflows.${options.workflow}`,
        message: `a ${options.workflow} needs the recipe to have a ${options.workflow} workflow`,
      },
    ],
  };
}

export async function resolveRecipeReference(options: {
  ref: RecipeReference;
  /** Where the reference is in the request: `backup.spec.recipe`, `restore.spec.recipe`. */
  path: string;
  workflow: 'backup' | 'restore';
  /** The request's own namespace, where a ConfigMap without a namespace is looked for. */
  requestNamespace?: string;
  cluster?: () => Promise<ClusterReader>;
  signal?: AbortSignal;
}): Promise<ValidationResult<ResolvedRecipe>> {
  const { ref, workflow } = options;
  if ('inline' in ref) {
    const path = `${options.path}.inline`;
    const checked = withWorkflow(validateRecipe(ref.inline, path), { path, workflow });
    return checked.ok
      ? { ok: true, value: { recipe: checked.value, stored: { document: ref.inline, source: 'inline' } } }
      : checked;
  }
  const namespace = ref.configMap.namespace ?? options.requestNamespace ?? DEFAULT_RECIPE_NAMESPACE;
  const { name } = ref.configMap;
  const where = `${options.path}(ConfigMap ${namespace}/${name})`;
  if (!options.cluster) throw new LifeboatError('the recipe ConfigMap cannot be read without the cluster');
  const read = await readRequestConfigMap({
    cluster: options.cluster,
    namespace,
    name,
    path: where,
    namePath: where,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (!read.ok) return read;
  const entry = onlyDataEntry(
    { namespace, name, data: read.value.data as Record<string, string> | undefined },
    (at, keys) => `the recipe ConfigMap ${at} must have exactly one data key, it has ${keys}`,
  );
  const prefixed = (problems: readonly { path: string; message: string }[]) =>
    problems.map((p) => ({ path: `${where}.${p.path}`, message: p.message }));
  if (!entry.ok) return { ok: false, problems: prefixed(entry.problems) };
  const decoded = decodeYaml(entry.value.text, entry.value.prefix);
  if (!decoded.ok) return { ok: false, problems: prefixed(decoded.problems) };
  const checked = withWorkflow(validateRecipe(decoded.value, entry.value.prefix), {
    path: entry.value.prefix,
    workflow,
  });
  if (!checked.ok) return { ok: false, problems: prefixed(checked.problems) };
  return {
    ok: true,
    value: {
      recipe: checked.value,
      stored: { document: decoded.value, source: `ConfigMap ${namespace}/${name}` },
    },
  };
}

/** A recipe kept in the working data (by the step that resolved it), validated again. */
export async function readStoredRecipe(options: {
  store: ObjectStore;
  key: string;
  /** For errors: `backup x`, `restore y`. */
  of: string;
  signal?: AbortSignal;
}): Promise<Recipe> {
  const raw = await options.store.get(options.key, { signal: options.signal });
  if (!raw) throw new LifeboatError(`the recipe of ${options.of} is missing from the working data`);
  const { document } = storedRecipe.parse(JSON.parse(Buffer.from(raw).toString('utf8')));
  const checked = validateRecipe(document);
  if (!checked.ok) throw new LifeboatError(`the stored recipe of ${options.of} is no longer valid`);
  return checked.value;
}
