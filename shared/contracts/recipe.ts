/**
 * Recipes (Lifeboat, beyond Velero; seed 002, after RamenDR's recipe): named groups of resources,
 * named exec hooks, and two workflows — `backup` and `restore` — that order `group:` and `hook:`
 * steps, so that e.g. a checkpoint and a freeze run before the volumes are taken and the rest of
 * the resources after. Given inline in a request or as YAML in a ConfigMap with one data key.
 * Validation reports every problem by field path, including steps that name an unknown group or
 * hook; it never throws. See docs/recipes.md.
 */
import * as z from 'zod';
import { parseDuration } from '../domain/kubernetes/duration.js';
import { type LabelSelector, parseSelector } from '../domain/kubernetes/label-selector.js';
import { type ConfigMapData, decodeYaml, onlyDataEntry } from './configmap-document.js';
import {
  dnsLabel,
  dnsSubdomain,
  fieldPath,
  issueMessage,
  labelSelector,
  namespacePatterns,
  problemsOf,
  resourcePatterns,
  type ValidationResult,
} from './kubernetes.js';

/** A recipe hook without its own timeout gets Velero's exec default. */
export const RECIPE_HOOK_DEFAULT_TIMEOUT_MS = 30_000;
/** How long a restore hook step waits for its pods when the hook does not say (Lifeboat's choice). */
export const RECIPE_HOOK_DEFAULT_WAIT_MS = 10 * 60_000;

/**
 * One of two shapes, told apart by the value's type rather than by trying both, so that the
 * problem reported is the one of the shape the user wrote (a union would only say "Invalid input").
 */
function byType<S extends z.ZodType, O extends z.ZodType>(options: {
  whenString: S;
  otherwise: O;
}): z.ZodType<z.output<S> | z.output<O>> {
  return z.unknown().transform((value, ctx) => {
    const schema: z.ZodType = typeof value === 'string' ? options.whenString : options.otherwise;
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data as z.output<S> | z.output<O>;
    for (const issue of parsed.error.issues) {
      ctx.addIssue({ code: 'custom', message: issueMessage(issue), path: issue.path as PropertyKey[] });
    }
    return z.NEVER;
  });
}

/**
 * `app=db,tier in (a,b)` as kubectl writes it, or a metav1.LabelSelector object; either way its
 * keys and values are held to Kubernetes' label syntax.
 */
const selector = byType({
  whenString: z.string().transform((text, ctx): LabelSelector => {
    const parsed = parseSelector(text);
    const checked = parsed ? labelSelector.safeParse(parsed) : undefined;
    if (!checked?.success) {
      const why = checked ? `: ${problemsOf(checked.error).map((p) => `${p.path} ${p.message}`)[0]}` : '';
      ctx.addIssue({
        code: 'custom',
        message: `"${text.slice(0, 80)}" is not a label selector (e.g. app=db,tier in (a,b))${why}`,
      });
      return z.NEVER;
    }
    return parsed as LabelSelector;
  }),
  otherwise: labelSelector,
});

const group = z.strictObject({
  name: dnsSubdomain,
  includedResourceTypes: resourcePatterns.optional(),
  excludedResourceTypes: resourcePatterns.optional(),
  includedNamespaces: namespacePatterns.optional(),
  excludedNamespaces: namespacePatterns.optional(),
  labelSelector: selector.optional(),
  /** Unset: as the request says (cluster-scoped types only when every namespace is taken). */
  includeClusterResources: z.boolean().optional(),
  /** A restore group: restores these types from that backup group's items. */
  backupGroup: dnsSubdomain.optional(),
});

/** The whole seconds a Go duration holds: 2^63 - 1 nanoseconds. */
const MAX_SECONDS = 9_223_372_036;

/** Seconds (RamenDR and seed 002 write `timeout: 1800`) or a Go duration (`30m`), in ms. */
const timeout = byType({
  whenString: z.string().transform((text, ctx) => {
    const ms = parseDuration(text);
    if (ms === undefined || ms <= 0) {
      ctx.addIssue({ code: 'custom', message: 'must be seconds (1800) or a positive duration (30m)' });
      return z.NEVER;
    }
    return ms;
  }),
  otherwise: z
    .number({ error: 'must be seconds (1800) or a positive duration (30m)' })
    .int({ error: 'must be a whole number of seconds' })
    .positive({ error: 'must be a positive number of seconds' })
    // What a Go duration holds (int64 nanoseconds), as for the string form.
    .max(MAX_SECONDS, { error: `must be at most ${MAX_SECONDS} seconds` })
    .transform((seconds) => seconds * 1000),
});

const command = byType({
  whenString: z
    .string()
    .min(1, { error: 'must not be empty' })
    .transform((c) => [c]),
  otherwise: z.array(z.string(), { error: 'must be a program path or an argument list' }).min(1, {
    error: 'must name the program to run',
  }),
});

const hook = z.strictObject({
  name: dnsSubdomain,
  /** Only exec hooks exist; the field is accepted for RamenDR recipes that spell it out. */
  type: z.literal('exec').optional(),
  labelSelector: selector.optional(),
  includedNamespaces: namespacePatterns.optional(),
  excludedNamespaces: namespacePatterns.optional(),
  /** Unset: the pod's first container. */
  container: dnsLabel.optional(),
  /** Run in order, each as one exec with the hook's timeout; a string is one program path. */
  commands: z.array(command).min(1),
  timeout: timeout.optional(),
  /**
   * Restore only: how long the step waits for its pods — for one to exist and for its container
   * to run (pods of workloads the restore just created come up after it). Default 10 minutes.
   */
  waitTimeout: timeout.optional(),
  /** Fail (the default for recipes) stops the workflow at this step. */
  onError: z.enum(['Continue', 'Fail']).optional(),
  /** Run on the first selected Running pod only (by namespace, then name), not on each. */
  singlePodOnly: z.boolean().optional(),
});

const step = z.union([z.strictObject({ group: dnsSubdomain }), z.strictObject({ hook: dnsSubdomain })], {
  error: () => 'a step is either {group: <name>} or {hook: <name>}',
});

const recipeInput = z.strictObject({
  groups: z.array(group).optional(),
  hooks: z.array(hook).optional(),
  workflows: z.strictObject({
    backup: z.array(step).min(1).optional(),
    restore: z.array(step).min(1).optional(),
  }),
});

type RecipeInput = z.output<typeof recipeInput>;
export type RecipeGroup = z.output<typeof group>;
export type RecipeStep = { readonly group: string } | { readonly hook: string };

export interface RecipeHook {
  readonly name: string;
  readonly labelSelector?: LabelSelector;
  readonly includedNamespaces?: readonly string[];
  readonly excludedNamespaces?: readonly string[];
  readonly container?: string;
  readonly commands: readonly (readonly string[])[];
  readonly timeoutMs: number;
  /** Restore hook steps: how long to wait for the pods (RECIPE_HOOK_DEFAULT_WAIT_MS unless set). */
  readonly waitTimeoutMs: number;
  readonly onError: 'Continue' | 'Fail';
  readonly singlePodOnly: boolean;
}

export interface Recipe {
  readonly groups: readonly RecipeGroup[];
  readonly hooks: readonly RecipeHook[];
  readonly workflows: { readonly backup?: readonly RecipeStep[]; readonly restore?: readonly RecipeStep[] };
}

type Problem = { path: (string | number)[]; message: string };

function duplicates(list: readonly { name: string }[], what: string, key: string): Problem[] {
  const first = new Map<string, number>();
  const problems: Problem[] = [];
  for (const [i, item] of list.entries()) {
    const earlier = first.get(item.name);
    if (earlier === undefined) first.set(item.name, i);
    else
      problems.push({
        path: [key, i, 'name'],
        message: `${what} "${item.name}" is already defined at ${key}[${earlier}]`,
      });
  }
  return problems;
}

/** The names a recipe defines, that its steps and restore groups refer to. */
interface DefinedNames {
  readonly groupByName: ReadonlyMap<string, RecipeGroup>;
  readonly hookNames: ReadonlySet<string>;
}

/** The cross-references a schema cannot see: names unique, steps and backupGroup naming what exists. */
function referenceProblems(recipe: RecipeInput): Problem[] {
  const groups = recipe.groups ?? [];
  const hooks = recipe.hooks ?? [];
  const problems = [...duplicates(groups, 'group', 'groups'), ...duplicates(hooks, 'hook', 'hooks')];
  const defined: DefinedNames = {
    groupByName: new Map(groups.map((g) => [g.name, g])),
    hookNames: new Set(hooks.map((h) => h.name)),
  };
  problems.push(...backupGroupProblems(groups, defined));
  const { backup, restore } = recipe.workflows;
  if (!backup && !restore) {
    problems.push({ path: ['workflows'], message: 'needs a backup or a restore workflow (or both)' });
  }
  // The backup workflow first: the restore workflow's groups are checked against what it backs up.
  const backedUp = new Set<string>();
  problems.push(
    ...stepProblems({ defined, workflow: 'backup', steps: backup, backedUp, afterBackup: false }),
    ...stepProblems({ defined, workflow: 'restore', steps: restore, backedUp, afterBackup: !!backup }),
  );
  return problems;
}

/** A restore group's backupGroup must name a group the backup takes. */
function backupGroupProblems(groups: readonly RecipeGroup[], defined: DefinedNames): Problem[] {
  const problems: Problem[] = [];
  for (const [i, g] of groups.entries()) {
    if (g.backupGroup === undefined) continue;
    const source = defined.groupByName.get(g.backupGroup);
    if (!source)
      problems.push({ path: ['groups', i, 'backupGroup'], message: `no group named "${g.backupGroup}"` });
    else if (source.backupGroup !== undefined)
      problems.push({
        path: ['groups', i, 'backupGroup'],
        message: `group "${g.backupGroup}" is itself a restore group (it has backupGroup); name a group the backup takes`,
      });
  }
  return problems;
}

/**
 * The steps of one workflow: each names a defined hook or group, a group once. The backup
 * workflow's groups go into `backedUp`; the restore workflow's, when there is a backup workflow,
 * must restore one of them.
 */
function stepProblems(options: {
  defined: DefinedNames;
  workflow: 'backup' | 'restore';
  steps: readonly RecipeStep[] | undefined;
  backedUp: Set<string>;
  afterBackup: boolean;
}): Problem[] {
  const { defined, workflow, backedUp } = options;
  const problems: Problem[] = [];
  const seen = new Map<string, number>();
  for (const [i, s] of (options.steps ?? []).entries()) {
    if ('hook' in s) {
      if (!defined.hookNames.has(s.hook))
        problems.push({ path: ['workflows', workflow, i, 'hook'], message: `no hook named "${s.hook}"` });
      continue;
    }
    const at = ['workflows', workflow, i, 'group'];
    const g = defined.groupByName.get(s.group);
    if (!g) {
      problems.push({ path: at, message: `no group named "${s.group}"` });
      continue;
    }
    const earlier = seen.get(s.group);
    if (earlier !== undefined)
      problems.push({
        path: at,
        message: `group "${s.group}" is already a step at workflows.${workflow}[${earlier}]`,
      });
    else seen.set(s.group, i);
    if (workflow === 'backup') {
      if (g.backupGroup !== undefined)
        problems.push({
          path: at,
          message: `group "${s.group}" is a restore group (it has backupGroup) and cannot be backed up`,
        });
      else backedUp.add(s.group);
    } else if (options.afterBackup) {
      const message = notBackedUp(g, { defined, backedUp });
      if (message) problems.push({ path: at, message });
    }
  }
  return problems;
}

/** Why a restore step's group has nothing to restore, if so. */
function notBackedUp(
  g: RecipeGroup,
  options: { defined: DefinedNames; backedUp: ReadonlySet<string> },
): string | undefined {
  const source = g.backupGroup ?? g.name;
  // An unknown or restore-only source is reported at its backupGroup already.
  const sourceGroup = options.defined.groupByName.get(source);
  if (!sourceGroup || sourceGroup.backupGroup !== undefined || options.backedUp.has(source)) return undefined;
  return source === g.name
    ? `group "${g.name}" is not backed up by the backup workflow, so there is nothing to restore`
    : `group "${g.name}" restores from "${source}", which the backup workflow does not back up`;
}

const recipeSchema = recipeInput.superRefine((recipe, ctx) => {
  for (const problem of referenceProblems(recipe)) ctx.addIssue({ code: 'custom', ...problem });
});

function problemsOfIssues(
  issues: readonly z.core.$ZodIssue[],
  prefix: string,
): { path: string; message: string }[] {
  return issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: fieldPath(prefix, [...issue.path, key]), message: 'unknown field' }))
      : [{ path: fieldPath(prefix, issue.path) || prefix || '(recipe)', message: issueMessage(issue) }],
  );
}

function normalized(input: RecipeInput): Recipe {
  return {
    groups: input.groups ?? [],
    hooks: (input.hooks ?? []).map((h) => ({
      name: h.name,
      ...(h.labelSelector ? { labelSelector: h.labelSelector } : {}),
      ...(h.includedNamespaces ? { includedNamespaces: h.includedNamespaces } : {}),
      ...(h.excludedNamespaces ? { excludedNamespaces: h.excludedNamespaces } : {}),
      ...(h.container ? { container: h.container } : {}),
      commands: h.commands,
      timeoutMs: h.timeout ?? RECIPE_HOOK_DEFAULT_TIMEOUT_MS,
      waitTimeoutMs: h.waitTimeout ?? RECIPE_HOOK_DEFAULT_WAIT_MS,
      // Recipes stop by default (RamenDR, seed 002: "defaults to Fail"): a workflow step that
      // did not happen must not be silently built upon. Velero-style hooks differ (hooks.ts).
      onError: h.onError ?? 'Fail',
      singlePodOnly: h.singlePodOnly ?? false,
    })),
    workflows: input.workflows,
  };
}

/** Validates a decoded recipe (the inline form); paths start with `prefix`. */
export function validateRecipe(input: unknown, prefix = ''): ValidationResult<Recipe> {
  const parsed = recipeSchema.safeParse(input);
  if (!parsed.success) return { ok: false, problems: problemsOfIssues(parsed.error.issues, prefix) };
  return { ok: true, value: normalized(parsed.data) };
}

/** Parses a recipe from YAML (or JSON) text; a syntax error names its line. */
export function parseRecipe(yamlText: string, prefix = ''): ValidationResult<Recipe> {
  const decoded = decodeYaml(yamlText, prefix || '(recipe)');
  return decoded.ok ? validateRecipe(decoded.value, prefix) : decoded;
}

/** The recipe a ConfigMap holds: exactly one data key (any name) whose value is the YAML recipe. */
export function recipeFromConfigMap(configMap: ConfigMapData): ValidationResult<Recipe> {
  const entry = onlyDataEntry(
    configMap,
    (where, keys) => `the recipe ConfigMap ${where} must have exactly one data key, it has ${keys}`,
  );
  return entry.ok ? parseRecipe(entry.value.text, entry.value.prefix) : entry;
}

/**
 * How a backup or restore request names its recipe: inline, or a ConfigMap (in the request's
 * namespace when none is given). The inline form is checked by `validateRecipe`, for its paths.
 */
export const recipeReference = z.union(
  [
    z.strictObject({ inline: z.record(z.string(), z.unknown()) }),
    z.strictObject({
      configMap: z.strictObject({ name: dnsSubdomain, namespace: dnsLabel.optional() }),
    }),
  ],
  { error: () => 'a recipe is either {inline: <recipe>} or {configMap: {name, namespace?}}' },
);
export type RecipeReference = z.output<typeof recipeReference>;
