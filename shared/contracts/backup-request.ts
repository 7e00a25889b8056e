/**
 * The backup request: a `velero.io/v1` Backup (metadata and spec, every Velero 1.17 spec field
 * accepted) plus the cluster to back up. Validation follows Velero's rules and reports every
 * problem by its field path; it never throws on bad input.
 */
import * as z from 'zod';
import { type BackupPlan, DEFAULT_TTL_MS } from '../domain/backup/plan.js';
import type { FieldProblem } from '../domain/errors.js';
import { parseDuration } from '../domain/kubernetes/duration.js';
import { isGlob } from '../domain/kubernetes/glob.js';
import { dnsLabelProblem, resourcePatternProblem } from '../domain/kubernetes/names.js';
import {
  checkedString,
  dnsLabel,
  dnsSubdomain,
  duration,
  execHookBase,
  hookSelector,
  labelSelector,
  labels,
  namespacePatterns,
  objectMetaInput,
  problemsOf,
  qualifiedName,
  resourcePatterns,
  timeout,
  type ValidationResult,
} from './kubernetes.js';
import { recipeReference, validateRecipe } from './recipe.js';
import { validateResourcePolicy } from './resource-policy.js';
import { copySnapshots, copySnapshotsProblems } from './snapshot-copies.js';

const execHook = z.strictObject({ ...execHookBase, timeout: timeout.optional() });

const hookSpec = z.strictObject({
  ...hookSelector,
  pre: z.array(z.strictObject({ exec: execHook })).optional(),
  post: z.array(z.strictObject({ exec: execHook })).optional(),
});

/** An `orderedResources` key: one resource by name (`pods`, `deployments.apps`), no pattern. */
const orderedResourceName = checkedString((name) =>
  isGlob(name) ? 'must name one resource, not a pattern' : resourcePatternProblem(name),
);

export const backupSpec = z.strictObject({
  metadata: z.strictObject({ labels: labels.optional() }).optional(),
  includedNamespaces: namespacePatterns.optional(),
  excludedNamespaces: namespacePatterns.optional(),
  includedResources: resourcePatterns.optional(),
  excludedResources: resourcePatterns.optional(),
  includeClusterResources: z.boolean().nullable().optional(),
  includedClusterScopedResources: resourcePatterns.optional(),
  excludedClusterScopedResources: resourcePatterns.optional(),
  includedNamespaceScopedResources: resourcePatterns.optional(),
  excludedNamespaceScopedResources: resourcePatterns.optional(),
  labelSelector: labelSelector.nullable().optional(),
  orLabelSelectors: z.array(labelSelector).nullable().optional(),
  snapshotVolumes: z.boolean().nullable().optional(),
  ttl: duration.optional(),
  /** A label key: the volumes whose PVCs share its value are snapshotted as one group. */
  volumeGroupSnapshotLabelKey: qualifiedName.optional(),
  hooks: z.strictObject({ resources: z.array(hookSpec).optional() }).optional(),
  /** Velero: the name of a BackupStorageLocation object. */
  storageLocation: dnsSubdomain.optional(),
  volumeSnapshotLocations: z.array(dnsSubdomain).optional(),
  defaultVolumesToRestic: z.boolean().nullable().optional(),
  defaultVolumesToFsBackup: z.boolean().nullable().optional(),
  orderedResources: z.record(orderedResourceName, checkedString(orderedNamesProblem)).nullable().optional(),
  csiSnapshotTimeout: timeout.optional(),
  itemOperationTimeout: timeout.optional(),
  /**
   * Velero: `{kind: configmap, name}`, a ConfigMap holding the resource policy in its only data
   * key, read from the backed-up cluster. Lifeboat adds `namespace` (default: the backup's
   * `metadata.namespace`, else `velero`, Velero's install namespace) and `inline`, the policy
   * document itself (`{version: v1, volumePolicies: [...]}`) instead of a ConfigMap.
   */
  resourcePolicy: z
    .strictObject({
      apiGroup: z.string().optional(),
      kind: z.string().optional(),
      name: z.string().optional(),
      namespace: dnsLabel.optional(),
      inline: z.unknown().optional(),
    })
    .optional(),
  snapshotMoveData: z.boolean().nullable().optional(),
  datamover: z.string().optional(),
  uploaderConfig: z.strictObject({ parallelFilesUpload: z.number().int().positive().optional() }).optional(),
  /**
   * Lifeboat, beyond Velero (seed 002): a recipe, inline or in a ConfigMap, whose `backup`
   * workflow orders the backup as groups of resources and named hooks (docs/recipes.md).
   */
  recipe: recipeReference.optional(),
  /**
   * Lifeboat, beyond Velero: copies of every native EBS and EBS CSI snapshot in other accounts
   * and regions, for disaster recovery (docs/disaster-recovery.md).
   */
  copySnapshots: copySnapshots.optional(),
});

export type BackupSpec = z.infer<typeof backupSpec>;

export const backupObject = z.strictObject({
  apiVersion: z.literal('velero.io/v1').optional(),
  kind: z.literal('Backup').optional(),
  metadata: objectMetaInput,
  spec: backupSpec.default({}),
});

export const backupRequest = z.strictObject({
  cluster: dnsSubdomain,
  backup: backupObject,
});

export type BackupRequest = z.infer<typeof backupRequest>;

const OLD_FILTERS = ['includedResources', 'excludedResources', 'includeClusterResources'] as const;
const SCOPED_FILTERS = [
  'includedClusterScopedResources',
  'excludedClusterScopedResources',
  'includedNamespaceScopedResources',
  'excludedNamespaceScopedResources',
] as const;

/** Velero's cross-field rules (backup_controller.go prepareBackupRequest). */
function crossFieldProblems(spec: BackupSpec): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const set = (v: unknown): boolean => v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0);
  const oldUsed = OLD_FILTERS.filter((f) => set(spec[f]));
  const scopedUsed = SCOPED_FILTERS.filter((f) => set(spec[f]));
  if (oldUsed.length > 0 && scopedUsed.length > 0) {
    for (const f of scopedUsed) {
      problems.push({
        path: `backup.spec.${f}`,
        message: `cannot be combined with ${oldUsed.join(', ')}: use either the old or the scoped resource filters`,
      });
    }
  }
  if (set(spec.labelSelector) && set(spec.orLabelSelectors)) {
    problems.push({
      path: 'backup.spec.orLabelSelectors',
      message: 'labelSelector and orLabelSelectors cannot co-exist',
    });
  }
  for (const [i, ns] of (spec.includedNamespaces ?? []).entries()) {
    if ((spec.excludedNamespaces ?? []).includes(ns)) {
      problems.push({ path: `backup.spec.includedNamespaces[${i}]`, message: `"${ns}" is also excluded` });
    }
  }
  problems.push(...resourcePolicyProblems(spec));
  problems.push(...recipeProblems(spec));
  problems.push(...copySnapshotsProblems(spec.copySnapshots, 'backup.spec.copySnapshots'));
  return problems;
}

/** Why an `orderedResources` value is not a list of `namespace/name` (or `name`), if it is not. */
function orderedNamesProblem(list: string): string | undefined {
  const shape = 'must be a comma-separated list of namespace/name (or name for cluster-scoped objects)';
  for (const entry of list.split(',').map((s) => s.trim())) {
    const parts = entry.split('/');
    const name = parts.at(-1) ?? '';
    if (parts.length > 2 || name === '' || name === '.' || name === '..') return shape;
    const namespaceProblem = parts.length === 2 ? dnsLabelProblem(parts[0] ?? '') : undefined;
    if (namespaceProblem) return `${shape}: the namespace of "${entry.slice(0, 80)}" ${namespaceProblem}`;
  }
  return undefined;
}

/**
 * Velero (prepareBackupRequest): a resource policy with an `includeExcludePolicy` works with the
 * scoped resource filters only; the old ones in the same backup fail its validation.
 */
export function includeExcludePolicyProblems(
  spec: BackupSpec,
  policy: { readonly version: string; readonly includeExcludePolicy?: unknown } | undefined,
): FieldProblem[] {
  if (policy?.includeExcludePolicy === undefined || policy.includeExcludePolicy === null) return [];
  const set = (v: unknown): boolean => v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0);
  return OLD_FILTERS.filter((f) => set(spec[f])).map((f) => ({
    path: `backup.spec.${f}`,
    message:
      "is an old filter parameter and cannot be used with the resource policy's includeExcludePolicy: use the scoped resource filters",
  }));
}

/** Where a backup's resource policy comes from, once the request is valid. */
export type ResourcePolicySource =
  | { readonly kind: 'inline'; readonly input: unknown }
  | { readonly kind: 'configMap'; readonly namespace: string; readonly name: string };

/** Velero reads the ConfigMap from its install namespace, `velero` by default. */
export const DEFAULT_RESOURCE_POLICY_NAMESPACE = 'velero';

export function resourcePolicySource(request: BackupRequest): ResourcePolicySource | undefined {
  const ref = request.backup.spec.resourcePolicy;
  if (!ref) return undefined;
  if (ref.inline !== undefined) return { kind: 'inline', input: ref.inline };
  return {
    kind: 'configMap',
    namespace: ref.namespace ?? request.backup.metadata.namespace ?? DEFAULT_RESOURCE_POLICY_NAMESPACE,
    name: ref.name ?? '',
  };
}

function resourcePolicyProblems(spec: BackupSpec): FieldProblem[] {
  const ref = spec.resourcePolicy;
  const path = (field: string) => `backup.spec.resourcePolicy${field ? `.${field}` : ''}`;
  if (!ref) return [];
  if (ref.inline !== undefined) {
    const extra = (['apiGroup', 'kind', 'name', 'namespace'] as const).filter((f) => ref[f] !== undefined);
    if (extra.length > 0)
      return [
        {
          path: path(''),
          message: `an inline policy and a ConfigMap (${extra.join(', ')}) exclude each other`,
        },
      ];
    const checked = validateResourcePolicy(ref.inline, path('inline'));
    return checked.ok ? [] : checked.problems;
  }
  const problems: FieldProblem[] = [];
  // Velero only knows ConfigMap references (resourcepolicies.ConfigmapRefType, any case).
  if (ref.kind?.toLowerCase() !== 'configmap')
    problems.push({ path: path('kind'), message: 'must be configmap (or give the policy inline)' });
  if (!ref.name || !dnsSubdomain.safeParse(ref.name).success)
    problems.push({ path: path('name'), message: 'must name the ConfigMap holding the resource policy' });
  return problems;
}

export type { ValidationResult };

export function validateBackupRequest(input: unknown): ValidationResult<BackupRequest> {
  const parsed = backupRequest.safeParse(input);
  if (!parsed.success) return { ok: false, problems: problemsOf(parsed.error) };
  const problems = crossFieldProblems(parsed.data.backup.spec);
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: parsed.data };
}

/** The normalized plan of a valid request (Velero defaults applied). */
export function toBackupPlan(request: BackupRequest): BackupPlan {
  const spec = request.backup.spec;
  const list = (v: readonly string[] | null | undefined): string[] => [...(v ?? [])];
  const scoped = SCOPED_FILTERS.some((f) => (spec[f] ?? []).length > 0);
  const resourceFilter: BackupPlan['resourceFilter'] = scoped
    ? {
        style: 'scoped',
        clusterScoped: {
          includes: list(spec.includedClusterScopedResources),
          excludes: list(spec.excludedClusterScopedResources),
        },
        // Empty includes include every namespace-scoped type (and leave room for a resource
        // policy's includes, which an explicit `*` would override).
        namespaceScoped: {
          includes: list(spec.includedNamespaceScopedResources),
          excludes: list(spec.excludedNamespaceScopedResources),
        },
      }
    : {
        style: 'old',
        resources: { includes: list(spec.includedResources), excludes: list(spec.excludedResources) },
        ...(typeof spec.includeClusterResources === 'boolean'
          ? { includeClusterResources: spec.includeClusterResources }
          : {}),
      };
  const orderedResources = Object.fromEntries(
    Object.entries(spec.orderedResources ?? {}).map(([resource, names]) => [
      resource,
      names.split(',').map((s) => s.trim()),
    ]),
  );
  return {
    name: request.backup.metadata.name,
    cluster: request.cluster,
    namespaces: { includes: list(spec.includedNamespaces), excludes: list(spec.excludedNamespaces) },
    resourceFilter,
    ...(spec.labelSelector ? { labelSelector: spec.labelSelector } : {}),
    ...(spec.orLabelSelectors?.length ? { orLabelSelectors: spec.orLabelSelectors } : {}),
    orderedResources,
    ttlMs: spec.ttl ? (parseDuration(spec.ttl) ?? DEFAULT_TTL_MS) : DEFAULT_TTL_MS,
  };
}

/** An inline recipe is checked whole here; one in a ConfigMap once it is read (CollectRecipeItems). */
function recipeProblems(spec: BackupSpec): FieldProblem[] {
  const ref = spec.recipe;
  if (!ref || !('inline' in ref)) return [];
  const path = 'backup.spec.recipe.inline';
  const checked = validateRecipe(ref.inline, path);
  if (!checked.ok) return checked.problems;
  return checked.value.workflows.backup
    ? []
    : [{ path: `${path}.workflows.backup`, message: 'a backup needs the recipe to have a backup workflow' }];
}
