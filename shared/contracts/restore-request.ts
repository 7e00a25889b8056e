/**
 * The restore request: a `velero.io/v1` Restore (metadata and spec) plus the target cluster,
 * and what Velero lacks: `includeItems` (restore named objects), `dryRun` (return the plan, write
 * nothing), resource modifiers given inline or from a ConfigMap in any namespace,
 * `volumeAvailabilityZone` (re-create snapshot volumes in another zone), `volumeKmsKeyId`
 * (encrypt them with a KMS key), and `volumeRegion` and `volumeAccountRoleArn` (write volumes
 * restored from the data mover's repository in another region or account). Validation
 * follows Velero's restore controller and reports every problem by field path.
 */
import * as z from 'zod';
import type { FieldProblem } from '../domain/errors.js';
import { dnsLabelProblem, resourcePatternProblem } from '../domain/kubernetes/names.js';
import { NON_RESTORABLE } from '../domain/restore/order.js';
import {
  checkedString,
  dnsLabel,
  dnsSubdomain,
  execHookBase,
  hookSelector,
  labelSelector,
  namespacePatterns,
  objectMetaInput,
  problemsOf,
  resourcePatterns,
  timeout,
  type ValidationResult,
} from './kubernetes.js';
import { recipeReference, validateRecipe } from './recipe.js';
import { type ResourceModifiersInput, resourceModifiersInput } from './resource-modifiers.js';

const execRestoreHook = z.strictObject({
  ...execHookBase,
  execTimeout: timeout.optional(),
  waitTimeout: timeout.optional(),
  waitForReady: z.boolean().optional(),
});

const restoreHookSpec = z.strictObject({
  ...hookSelector,
  postHooks: z
    .array(
      z.strictObject({
        init: z
          .strictObject({
            initContainers: z.array(z.record(z.string(), z.unknown())).optional(),
            timeout: timeout.optional(),
          })
          .optional(),
        exec: execRestoreHook.optional(),
      }),
    )
    .optional(),
});

/** The forms EC2 CreateVolume's KmsKeyId takes: key id (or multi-Region `mrk-`), key ARN, alias, alias ARN. */
const KMS_KEY = '(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|mrk-[0-9a-f]{32})';
const KMS_ALIAS = 'alias/[A-Za-z0-9/_-]{1,250}';
const KMS_KEY_ID = new RegExp(
  `^(?:${KMS_KEY}|${KMS_ALIAS}|arn:aws(?:-[a-z]+)*:kms:[a-z]{2}(?:-[a-z0-9]+)+-\\d:\\d{12}:(?:key/${KMS_KEY}|${KMS_ALIAS}))$`,
);

/**
 * Why an `includeItems` entry names no object, if it does not: `kind/namespace/name`, or
 * `kind/name` for cluster-scoped objects (Lifeboat). The kind is a resource as discovery resolves
 * it, the namespace a namespace name, the name any object name (`system:nodes` included) that is
 * a path segment: no "/", not "." or "..".
 */
function includeItemProblem(selector: string): string | undefined {
  const shape = 'must be kind/namespace/name or kind/name';
  const parts = selector.split('/');
  if (parts.length < 2 || parts.length > 3) return shape;
  const [kind = '', ...rest] = parts;
  const name = rest.at(-1) ?? '';
  const kindProblem = kind.length > 0 && /[*?[{]/.test(kind) ? 'is a pattern' : resourcePatternProblem(kind);
  if (kindProblem) return `${shape}: its kind ${kindProblem}`;
  const namespaceProblem = rest.length === 2 ? dnsLabelProblem(rest[0] ?? '') : undefined;
  if (namespaceProblem) return `${shape}: its namespace ${namespaceProblem}`;
  if (name === '' || name === '.' || name === '..')
    return `${shape}: its name must not be empty, "." or ".."`;
  if (name.length > 253 || name.includes('%') || [...name].some((c) => c < ' '))
    return `${shape}: its name must be at most 253 characters, without "%" or control characters`;
  return undefined;
}

const itemSelector = checkedString(includeItemProblem);

export const restoreSpec = z.strictObject({
  backupName: dnsSubdomain.optional(),
  scheduleName: dnsSubdomain.optional(),
  includedNamespaces: namespacePatterns.optional(),
  excludedNamespaces: namespacePatterns.optional(),
  includedResources: resourcePatterns.optional(),
  excludedResources: resourcePatterns.optional(),
  includeClusterResources: z.boolean().nullable().optional(),
  labelSelector: labelSelector.nullable().optional(),
  orLabelSelectors: z.array(labelSelector).nullable().optional(),
  /** Source namespace → target namespace: both namespace names (DNS labels), no patterns. */
  namespaceMapping: z.record(dnsLabel, dnsLabel).optional(),
  restorePVs: z.boolean().nullable().optional(),
  preserveNodePorts: z.boolean().nullable().optional(),
  existingResourcePolicy: z.enum(['none', 'update']).optional(),
  restoreStatus: z
    .strictObject({
      includedResources: resourcePatterns.optional(),
      excludedResources: resourcePatterns.optional(),
    })
    .optional(),
  hooks: z.strictObject({ resources: z.array(restoreHookSpec).optional() }).optional(),
  itemOperationTimeout: timeout.optional(),
  /**
   * Velero: `{kind: ConfigMap, name}`, a ConfigMap with the rules in its only data key, read from
   * the target cluster. Lifeboat adds `namespace` (default: the restore's `metadata.namespace`,
   * else `velero`, where Velero reads it: its install namespace) and `inline`, the rule set itself
   * (`{version: v1, resourceModifierRules: [...]}`) instead of a ConfigMap.
   */
  resourceModifier: z
    .strictObject({
      apiGroup: z.string().optional(),
      kind: z.string().optional(),
      name: z.string().optional(),
      namespace: dnsLabel.optional(),
      inline: resourceModifiersInput.optional(),
    })
    .optional(),
  uploaderConfig: z
    .strictObject({
      writeSparseFiles: z.boolean().optional(),
      parallelFilesDownload: z.number().int().positive().optional(),
    })
    .optional(),
  /** Lifeboat: restore only these objects. */
  includeItems: z.array(itemSelector).optional(),
  /** Lifeboat: plan only; nothing is written. */
  dryRun: z.boolean().optional(),
  /**
   * Lifeboat: the availability zone in which volumes are re-created from native snapshots,
   * instead of the zone each snapshot recorded (Velero has no such field; its zones are fixed).
   */
  volumeAvailabilityZone: z
    .string()
    .regex(/^[a-z]{2}(-[a-z0-9]+)+-\d[a-z]$/, {
      message: 'must be an availability zone name, such as us-east-1a',
    })
    .optional(),
  /**
   * Lifeboat: the KMS key that encrypts volumes re-created from native snapshots, whatever the
   * snapshot's encryption (Velero sets it per volume snapshot location: the AWS plugin's
   * `ebsKmsKeyId`). A key id, key ARN, alias name or alias ARN, as EC2 CreateVolume takes it.
   */
  volumeKmsKeyId: z
    .string()
    .regex(KMS_KEY_ID, {
      message: 'must be a KMS key id, key ARN, alias name (alias/...) or alias ARN',
    })
    .optional(),
  /**
   * Lifeboat: the region in which volumes restored from the data mover's repository are written
   * (default: the restore's own). Needs `volumeAvailabilityZone`, a zone of that region.
   */
  volumeRegion: z
    .string()
    .regex(/^[a-z]{2}(-[a-z0-9]+)+-\d$/, { message: 'must be an AWS region name, such as us-west-2' })
    .optional(),
  /**
   * Lifeboat: a role in another account through which the data mover writes the snapshots and
   * volumes it restores from its repository (cross-account DR), with the external id its trust
   * policy asks for.
   */
  volumeAccountRoleArn: z
    .string()
    .regex(/^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/, {
      message: 'must be an IAM role ARN, such as arn:aws:iam::123456789012:role/lifeboat-restore',
    })
    .optional(),
  volumeAccountExternalId: z
    .string()
    .regex(/^[\w+=,.@:/-]{2,1224}$/, { message: 'must be 2-1224 characters of letters, digits and +=,.@:/-' })
    .optional(),
  /**
   * Lifeboat, beyond Velero (seed 002): a recipe, inline or in a ConfigMap of the target cluster,
   * whose `restore` workflow orders the restore as groups of the backed-up resources and named
   * hooks (docs/recipes.md).
   */
  recipe: recipeReference.optional(),
});
export type RestoreSpec = z.infer<typeof restoreSpec>;

export const restoreRequest = z.strictObject({
  cluster: dnsSubdomain,
  restore: z.strictObject({
    apiVersion: z.literal('velero.io/v1').optional(),
    kind: z.literal('Restore').optional(),
    metadata: objectMetaInput,
    spec: restoreSpec,
  }),
});
export type RestoreRequest = z.infer<typeof restoreRequest>;

/** Where a restore's resource modifiers come from, once the request is valid. */
export type ResourceModifierSource =
  | { readonly kind: 'inline'; readonly input: ResourceModifiersInput }
  | { readonly kind: 'configMap'; readonly namespace: string; readonly name: string };

/** Velero reads the ConfigMap from its install namespace, `velero` by default. */
export const DEFAULT_RESOURCE_MODIFIER_NAMESPACE = 'velero';

export function resourceModifierSource(request: RestoreRequest): ResourceModifierSource | undefined {
  const ref = request.restore.spec.resourceModifier;
  if (!ref) return undefined;
  if (ref.inline) return { kind: 'inline', input: ref.inline };
  return {
    kind: 'configMap',
    namespace: ref.namespace ?? request.restore.metadata.namespace ?? DEFAULT_RESOURCE_MODIFIER_NAMESPACE,
    name: ref.name ?? '',
  };
}

function resourceModifierProblems(spec: RestoreSpec): FieldProblem[] {
  const ref = spec.resourceModifier;
  const path = (field: string) => `restore.spec.resourceModifier${field ? `.${field}` : ''}`;
  if (!ref) return [];
  if (ref.inline) {
    const extra = (['apiGroup', 'kind', 'name', 'namespace'] as const).filter((f) => ref[f] !== undefined);
    return extra.length > 0
      ? [{ path: path(''), message: `inline rules and a ConfigMap (${extra.join(', ')}) exclude each other` }]
      : [];
  }
  const problems: FieldProblem[] = [];
  // Velero only knows ConfigMap references (resourcemodifiers.ConfigmapRefType, any case).
  if (ref.kind?.toLowerCase() !== 'configmap')
    problems.push({ path: path('kind'), message: 'must be ConfigMap (or give the rules inline)' });
  if (!ref.name || !dnsSubdomain.safeParse(ref.name).success)
    problems.push({ path: path('name'), message: 'must name the ConfigMap holding the rules' });
  return problems;
}

/** An inline recipe is checked whole here; one in a ConfigMap once ValidateRestore reads it. */
export function restoreRecipeProblems(spec: RestoreSpec): FieldProblem[] {
  const ref = spec.recipe;
  if (!ref || !('inline' in ref)) return [];
  const path = 'restore.spec.recipe.inline';
  const checked = validateRecipe(ref.inline, path);
  if (!checked.ok) return checked.problems;
  return checked.value.workflows.restore
    ? []
    : [
        {
          path: `${path}.workflows.restore`,
          message: 'a restore needs the recipe to have a restore workflow',
        },
      ];
}

/** Where volumes restored from the repository go: a zone of the region, a key of the region. */
function volumeTargetProblems(spec: RestoreSpec): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const path = (field: string) => `restore.spec.${field}`;
  const region = spec.volumeRegion;
  const zone = spec.volumeAvailabilityZone;
  if (region && !zone)
    problems.push({
      path: path('volumeAvailabilityZone'),
      message: `is required with volumeRegion: the zone of ${region} the volumes are created in`,
    });
  // A zone of the region: `<region><letter>`, or a Local Zone `<region>-<place>-<n><letter>`.
  if (
    region &&
    zone &&
    !(zone.startsWith(region) && /^([a-z]|-[a-z]+-\d[a-z])$/.test(zone.slice(region.length)))
  )
    problems.push({
      path: path('volumeAvailabilityZone'),
      message: `must be a zone of volumeRegion ${region}`,
    });
  const keyRegion = /^arn:aws[a-z-]*:kms:([a-z0-9-]+):/.exec(spec.volumeKmsKeyId ?? '')?.[1];
  if (region && keyRegion && keyRegion !== region)
    problems.push({
      path: path('volumeKmsKeyId'),
      message: `is a key of ${keyRegion}, not of volumeRegion ${region}`,
    });
  if (spec.volumeAccountExternalId && !spec.volumeAccountRoleArn)
    problems.push({ path: path('volumeAccountExternalId'), message: 'needs volumeAccountRoleArn' });
  return problems;
}

/** Velero's restore controller checks (restore_controller.go validateAndComplete). */
function crossFieldProblems(spec: RestoreSpec): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const path = (field: string) => `restore.spec.${field}`;
  if (Boolean(spec.backupName) === Boolean(spec.scheduleName)) {
    problems.push({
      path: path('backupName'),
      message: 'exactly one of backupName and scheduleName must be given',
    });
  }
  for (const [i, resource] of (spec.includedResources ?? []).entries()) {
    // Names as written; planning checks again once names are resolved through discovery.
    if (NON_RESTORABLE.includes(resource)) {
      problems.push({ path: path(`includedResources[${i}]`), message: `${resource} cannot be restored` });
    }
  }
  for (const [i, ns] of (spec.includedNamespaces ?? []).entries()) {
    if ((spec.excludedNamespaces ?? []).includes(ns)) {
      problems.push({ path: path(`includedNamespaces[${i}]`), message: `"${ns}" is also excluded` });
    }
  }
  for (const [i, r] of (spec.includedResources ?? []).entries()) {
    if ((spec.excludedResources ?? []).includes(r)) {
      problems.push({ path: path(`includedResources[${i}]`), message: `"${r}" is also excluded` });
    }
  }
  const hasSelector = spec.labelSelector !== undefined && spec.labelSelector !== null;
  if (hasSelector && (spec.orLabelSelectors?.length ?? 0) > 0) {
    problems.push({
      path: path('orLabelSelectors'),
      message: 'labelSelector and orLabelSelectors cannot co-exist',
    });
  }
  problems.push(...resourceModifierProblems(spec));
  problems.push(...restoreRecipeProblems(spec));
  problems.push(...volumeTargetProblems(spec));
  const targets = Object.values(spec.namespaceMapping ?? {});
  const duplicate = targets.find((t, i) => targets.indexOf(t) !== i);
  if (duplicate)
    problems.push({ path: path('namespaceMapping'), message: `two namespaces map to "${duplicate}"` });
  return problems;
}

export function validateRestoreRequest(input: unknown): ValidationResult<RestoreRequest> {
  const parsed = restoreRequest.safeParse(input);
  if (!parsed.success) return { ok: false, problems: problemsOf(parsed.error) };
  const problems = crossFieldProblems(parsed.data.restore.spec);
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: parsed.data };
}
