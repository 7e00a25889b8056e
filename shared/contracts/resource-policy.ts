/**
 * The resource policy document (Velero `internal/resourcepolicies`, `version: v1`): parsed from
 * YAML text as Velero decodes it (unknown fields and duplicate keys rejected, one document), given
 * inline or as a ConfigMap with exactly one data key. Every problem is reported by its field path
 * (`volumePolicies[0].conditions.capacity`); bad input never throws.
 * Supported: volumePolicies with conditions capacity, storageClass, nfs, csi, volumeTypes,
 * pvcLabels, pvcPhase and actions skip, snapshot, fs-backup; includeExcludePolicy (Velero 1.17).
 */
import * as z from 'zod';
import type { FieldProblem } from '../domain/errors.js';
import { dnsSubdomainProblem, labelValueProblem } from '../domain/kubernetes/names.js';
import {
  PVC_PHASES,
  parseCapacityRange,
  type ResourcePolicy,
  SUPPORTED_VOLUME_TYPES,
} from '../domain/volumes/conditions.js';
import { type ConfigMapData, decodeYaml, onlyDataEntry } from './configmap-document.js';
import {
  fieldPath,
  issueMessage,
  qualifiedName,
  resourcePatterns,
  type ValidationResult,
} from './kubernetes.js';

const QUOTE_HINT = ' (quote values such as 1 or true in YAML)';
const typeMessage =
  (expected: string, hint = '') =>
  (issue: { input?: unknown }): string =>
    issue.input === undefined ? 'is required' : `must be ${expected}${hint}`;
const text = z.string({ error: typeMessage('a string', QUOTE_HINT) });
/** A string (with the YAML quoting hint when it is not one) held to one of Kubernetes' name rules. */
const checkedText = (problem: (value: string) => string | undefined) =>
  text.superRefine((value, ctx) => {
    const message = problem(value);
    if (message) ctx.addIssue({ code: 'custom', message });
  });
const textMap = z.record(z.string(), text, { error: typeMessage('a map of strings') });
const map = { error: typeMessage('a map') };

const conditions = z.strictObject(
  {
    capacity: text
      .superRefine((value, ctx) => {
        const parsed = parseCapacityRange(value);
        if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.message });
      })
      .nullish(),
    storageClass: z
      .array(checkedText(dnsSubdomainProblem), { error: typeMessage('a list of strings') })
      .nullish(),
    nfs: z.strictObject({ server: text.nullish(), path: text.nullish() }, map).nullish(),
    csi: z
      .strictObject({ driver: text.nullish(), volumeAttributes: textMap.nullish() }, map)
      .superRefine((csi, ctx) => {
        // Velero csiCondition.validate: attributes only make sense for one driver.
        if (!csi.driver && csi.volumeAttributes != null) {
          ctx.addIssue({
            code: 'custom',
            path: ['driver'],
            message: 'csi driver should not be empty when filtering by volume attributes',
          });
        }
      })
      .nullish(),
    volumeTypes: z.array(z.enum(SUPPORTED_VOLUME_TYPES)).nullish(),
    pvcLabels: z
      .record(qualifiedName, checkedText(labelValueProblem), { error: typeMessage('a map of strings') })
      .nullish(),
    pvcPhase: z.array(z.enum(PVC_PHASES)).nullish(),
  },
  map,
);

const volumePolicy = z.strictObject(
  {
    conditions: conditions.nullish(),
    action: z.strictObject(
      {
        type: z.enum(['skip', 'snapshot', 'fs-backup'], {
          error: (issue) =>
            issue.input === undefined ? 'is required' : 'must be skip, snapshot or fs-backup',
        }),
        parameters: z.record(z.string(), z.unknown(), map).nullish(),
      },
      map,
    ),
  },
  map,
);

const scopedResources = resourcePatterns.nullish();

const includeExcludePolicy = z
  .strictObject(
    {
      includedClusterScopedResources: scopedResources,
      excludedClusterScopedResources: scopedResources,
      includedNamespaceScopedResources: scopedResources,
      excludedNamespaceScopedResources: scopedResources,
    },
    map,
  )
  .superRefine((policy, ctx) => {
    // Velero IncludeExcludePolicy.Validate: no "*", and nothing both included and excluded.
    for (const scope of ['ClusterScoped', 'NamespaceScoped'] as const) {
      const included = policy[`included${scope}Resources`] ?? [];
      const excluded = policy[`excluded${scope}Resources`] ?? [];
      for (const [field, list] of [
        [`included${scope}Resources`, included],
        [`excluded${scope}Resources`, excluded],
      ] as const) {
        for (const [i, name] of list.entries()) {
          if (name === '*') {
            ctx.addIssue({
              code: 'custom',
              path: [field, i],
              message: "cannot use '*' in includes or excludes filters in the policy",
            });
          }
        }
      }
      for (const [i, name] of excluded.entries()) {
        if (name !== '*' && included.includes(name)) {
          ctx.addIssue({
            code: 'custom',
            path: [`excluded${scope}Resources`, i],
            message: `excludes list cannot contain an item in the includes list: ${name}`,
          });
        }
      }
    }
  });

/** The resource policy document; also the schema of the inline form a backup request will carry. */
export const resourcePolicySchema = z.strictObject(
  {
    version: z.literal('v1', {
      error: (issue) =>
        issue.input === undefined
          ? 'is required'
          : `incompatible version number ${typeof issue.input === 'string' ? issue.input.slice(0, 40) : `(a ${issue.input === null ? 'null' : typeof issue.input})`} with supported version v1`,
    }),
    volumePolicies: z.array(volumePolicy).nullish(),
    includeExcludePolicy: includeExcludePolicy.nullish(),
  },
  { error: () => 'the document must be a map with version: v1' },
);

export type ResourcePolicyDocument = z.infer<typeof resourcePolicySchema>;

/** Zod issues as field problems; an unknown field is named by its own path. */
function problemsOfIssues(issues: readonly z.core.$ZodIssue[], prefix: string): FieldProblem[] {
  return issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: fieldPath(prefix, [...issue.path, key]), message: 'unknown field' }))
      : [{ path: fieldPath(prefix, issue.path) || '(document)', message: issueMessage(issue) }],
  );
}

/** Validates an already-decoded document (the inline form). */
export function validateResourcePolicy(input: unknown, prefix = ''): ValidationResult<ResourcePolicy> {
  const parsed = resourcePolicySchema.safeParse(input);
  if (!parsed.success) return { ok: false, problems: problemsOfIssues(parsed.error.issues, prefix) };
  return { ok: true, value: parsed.data };
}

/** Parses YAML (or JSON) text into a resource policy; syntax errors name the line. */
export function parseResourcePolicy(yamlText: string, prefix = ''): ValidationResult<ResourcePolicy> {
  // One document with unique keys, as Velero's decoder reads it.
  const decoded = decodeYaml(yamlText, prefix || '(document)');
  return decoded.ok ? validateResourcePolicy(decoded.value, prefix) : decoded;
}

/**
 * The policy a ConfigMap holds: its `data` must have exactly one key (any name), whose value is
 * the YAML document (Velero getResourcePoliciesFromConfig).
 */
export function resourcePolicyFromConfigMap(configMap: ConfigMapData): ValidationResult<ResourcePolicy> {
  const entry = onlyDataEntry(
    configMap,
    (where, keys) =>
      `illegal resource policies ${where} configmap: data must have exactly one key, it has ${keys}`,
  );
  return entry.ok ? parseResourcePolicy(entry.value.text, entry.value.prefix) : entry;
}
