/**
 * Restore resource modifiers in Velero's format (`version: v1`, `resourceModifierRules`), as a
 * ConfigMap's single data key holds them in YAML or as a restore request carries them inline,
 * validated by field path; and the resolved rule set ValidateRestore leaves in the working data
 * for PlanRestore (values parsed, one patch kind per rule).
 * Stricter than Velero where Velero would only fail later, item by item: a rule must carry
 * exactly one kind of patch, paths must be JSON pointers, a `{`/`[` value must be JSON and a
 * patchData must be a YAML or JSON mapping. Never reads a cluster.
 */
import { parse as parseYaml } from 'yaml';
import * as z from 'zod';
import type { FieldProblem } from '../domain/errors.js';
import {
  groupResourceGlob,
  type JsonPatchOperation,
  jsonPatchValue,
  nameRegex,
  type ResourceModifierRule,
  type ResourceModifiers,
} from '../domain/restore/resource-modifiers.js';
import { dnsLabel, labelSelector, problemsOf, type ValidationResult } from './kubernetes.js';
import { YAML_1_1 } from './yaml-options.js';

const OPERATIONS = ['add', 'remove', 'replace', 'move', 'copy', 'test'] as const;

/** Velero's `value` is a string it turns into JSON itself. */
const patchValue = z
  .string({ error: 'must be a string (Velero parses it: write "3" for the number 3)' })
  .superRefine((text, ctx) => {
    const parsed = jsonPatchValue(text);
    if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.message });
  });

const pointer = z
  .string()
  .min(1, { message: 'must not be empty' })
  .regex(/^\//, { message: 'must be a JSON pointer starting with /' });

function yamlMapping(
  text: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; message: string } {
  let value: unknown;
  try {
    value = parseYaml(text, YAML_1_1);
  } catch (error) {
    return { ok: false, message: `is not YAML or JSON: ${(error as Error).message.split('\n')[0]}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { ok: false, message: 'must be a YAML or JSON mapping' };
  return { ok: true, value: value as Record<string, unknown> };
}

const patchData = z.strictObject({
  patchData: z.string().superRefine((text, ctx) => {
    const parsed = yamlMapping(text);
    if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.message });
  }),
});

const jsonPatchInput = z
  .strictObject({
    operation: z.string().refine((op) => (OPERATIONS as readonly string[]).includes(op.toLowerCase()), {
      message: `must be one of ${OPERATIONS.join(', ')}`,
    }),
    from: z.string().optional(),
    path: pointer,
    value: patchValue.optional(),
  })
  .superRefine((patch, ctx) => {
    const op = patch.operation.toLowerCase();
    if ((op === 'move' || op === 'copy') && !patch.from?.startsWith('/'))
      ctx.addIssue({ code: 'custom', path: ['from'], message: `${op} needs a JSON pointer to copy from` });
  });

const conditions = z.strictObject({
  groupResource: z
    .string()
    .min(1, { message: 'must not be empty' })
    .refine((g) => groupResourceGlob(g) !== undefined, { message: 'is not a valid glob pattern' }),
  resourceNameRegex: z
    .string()
    .refine((r) => nameRegex(r) !== undefined, { message: 'is not a valid regular expression' })
    .optional(),
  /** Velero compares these with an item's namespace as they are: names, not patterns. */
  namespaces: z.array(dnsLabel).optional(),
  labelSelector: labelSelector.optional(),
  matches: z.array(z.strictObject({ path: pointer, value: patchValue.optional() })).optional(),
});

const rule = z
  .strictObject({
    conditions,
    patches: z.array(jsonPatchInput).optional(),
    mergePatches: z.array(patchData).optional(),
    strategicPatches: z.array(patchData).optional(),
  })
  .superRefine((r, ctx) => {
    const kinds = [r.patches, r.mergePatches, r.strategicPatches].filter((p) => (p?.length ?? 0) > 0);
    if (kinds.length !== 1)
      ctx.addIssue({
        code: 'custom',
        message:
          kinds.length === 0
            ? 'needs patches, mergePatches or strategicPatches'
            : 'may carry only one of patches, mergePatches and strategicPatches (Velero applies only the first)',
      });
  });

/** The rule set as Velero reads it (resource_modifiers.go, validated as its Validate does and more). */
export const resourceModifiersInput = z.strictObject({
  version: z.string().refine((v) => v.toLowerCase() === 'v1', { message: 'must be v1' }),
  resourceModifierRules: z.array(rule).min(1, { message: 'must not be empty' }),
});
export type ResourceModifiersInput = z.infer<typeof resourceModifiersInput>;

function patchValueOf(text: string | undefined): unknown {
  const parsed = jsonPatchValue(text ?? '');
  return parsed.ok ? parsed.value : text;
}

/** The domain rule set of a validated input. */
export function toResourceModifiers(input: ResourceModifiersInput): ResourceModifiers {
  const rules = input.resourceModifierRules.map((r): ResourceModifierRule => {
    const c = r.conditions;
    const conditions = {
      groupResource: c.groupResource,
      ...(c.resourceNameRegex ? { resourceNameRegex: c.resourceNameRegex } : {}),
      ...(c.namespaces ? { namespaces: c.namespaces } : {}),
      ...(c.labelSelector ? { labelSelector: c.labelSelector } : {}),
      ...(c.matches
        ? { matches: c.matches.map((m) => ({ path: m.path, value: patchValueOf(m.value) })) }
        : {}),
    };
    const mappings = (list: readonly { patchData: string }[]) =>
      list.map((p) => {
        const parsed = yamlMapping(p.patchData);
        return parsed.ok ? parsed.value : {};
      });
    if (r.patches?.length) {
      const operations = r.patches.map((p): JsonPatchOperation => {
        const op = p.operation.toLowerCase() as JsonPatchOperation['op'];
        if (op === 'remove') return { op, path: p.path };
        if (op === 'move' || op === 'copy') return { op, path: p.path, from: p.from ?? '' };
        return { op, path: p.path, value: patchValueOf(p.value) };
      });
      return { conditions, patch: { kind: 'json', operations } };
    }
    if (r.mergePatches?.length)
      return { conditions, patch: { kind: 'merge', patches: mappings(r.mergePatches) } };
    return { conditions, patch: { kind: 'strategic', patches: mappings(r.strategicPatches ?? []) } };
  });
  return { rules };
}

/** Validates a rule set given as data (inline in a request, or YAML already parsed). */
export function parseResourceModifiers(input: unknown, prefix: string): ValidationResult<ResourceModifiers> {
  const parsed = resourceModifiersInput.safeParse(input);
  if (!parsed.success) return { ok: false, problems: problemsOf(parsed.error, prefix) };
  return { ok: true, value: toResourceModifiers(parsed.data) };
}

/**
 * The rule set of a ConfigMap as Velero reads it (GetResourceModifiersFromConfig): exactly one
 * data key, its value YAML. `where` names the ConfigMap in problem paths.
 */
export function resourceModifiersFromConfigMap(
  configMap: Record<string, unknown>,
  where: string,
): ValidationResult<ResourceModifiers> {
  const data = configMap.data;
  const entries =
    data !== null && typeof data === 'object' && !Array.isArray(data) ? Object.entries(data) : [];
  if (entries.length !== 1) {
    const problem: FieldProblem = {
      path: where,
      message: `must have exactly one data key holding the rules in YAML (it has ${entries.length})`,
    };
    return { ok: false, problems: [problem] };
  }
  const [key, text] = entries[0] ?? ['', ''];
  const at = `${where}.data[${key}]`;
  let document: unknown;
  try {
    document = parseYaml(String(text), YAML_1_1);
  } catch (error) {
    return {
      ok: false,
      problems: [{ path: at, message: `is not YAML: ${(error as Error).message.split('\n')[0]}` }],
    };
  }
  return parseResourceModifiers(document, at);
}

// The resolved rule set, as ValidateRestore writes it for PlanRestore.
const json = z.unknown();
const jsonObject = z.record(z.string(), z.unknown());
export const resolvedResourceModifiers = z.strictObject({
  rules: z.array(
    z.strictObject({
      conditions: z.strictObject({
        groupResource: z.string(),
        resourceNameRegex: z.string().optional(),
        namespaces: z.array(z.string()).optional(),
        labelSelector: labelSelector.optional(),
        matches: z.array(z.strictObject({ path: z.string(), value: json.optional() })).optional(),
      }),
      patch: z.discriminatedUnion('kind', [
        z.strictObject({
          kind: z.literal('json'),
          operations: z.array(
            z.strictObject({
              op: z.enum(OPERATIONS),
              path: z.string(),
              from: z.string().optional(),
              value: json.optional(),
            }),
          ),
        }),
        z.strictObject({ kind: z.literal('merge'), patches: z.array(jsonObject) }),
        z.strictObject({ kind: z.literal('strategic'), patches: z.array(jsonObject) }),
      ]),
    }),
  ),
}) satisfies z.ZodType<ResourceModifiers>;
