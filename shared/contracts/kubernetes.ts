/**
 * Schemas for the Kubernetes shapes Velero's objects embed: object metadata and label
 * selectors, and the validation of names.
 */
import { z } from 'zod';
import type { FieldProblem } from '../domain/errors.js';
import { parseDuration } from '../domain/kubernetes/duration.js';

/** DNS-1123 subdomain, the rule for most object names (and for backup names, used in keys). */
export const dnsSubdomain = z
  .string()
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, {
    message:
      'must be a lowercase RFC 1123 subdomain (a-z, 0-9, "-" and ".", starting and ending alphanumeric)',
  });

export const labelSelectorRequirement = z.strictObject({
  key: z.string().min(1),
  operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
  values: z.array(z.string()).optional(),
});

export const labelSelector = z
  .strictObject({
    matchLabels: z.record(z.string(), z.string()).optional(),
    matchExpressions: z.array(labelSelectorRequirement).optional(),
  })
  .superRefine((sel, ctx) => {
    for (const [i, req] of (sel.matchExpressions ?? []).entries()) {
      const needsValues = req.operator === 'In' || req.operator === 'NotIn';
      if (needsValues && (req.values ?? []).length === 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['matchExpressions', i, 'values'],
          message: `${req.operator} needs values`,
        });
      }
      if (!needsValues && (req.values ?? []).length > 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['matchExpressions', i, 'values'],
          message: `${req.operator} takes no values`,
        });
      }
    }
  });

export const objectMetaInput = z.object({
  name: dnsSubdomain,
  namespace: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});

/** A list of names or patterns, none empty. */
export const names = z.array(z.string().min(1, { message: 'must not be empty' }));

/** A Go duration as Velero's API carries it. */
export const duration = z.string().refine((d) => parseDuration(d) !== undefined, {
  message: 'must be a duration such as 720h, 1h30m or 10m0s',
});

/** What a hook applies to (Velero's hook spec selectors), shared by backup and restore hooks. */
export const hookSelector = {
  name: z.string().min(1),
  includedNamespaces: names.optional(),
  excludedNamespaces: names.optional(),
  includedResources: names.optional(),
  excludedResources: names.optional(),
  labelSelector: labelSelector.optional(),
};

/** The fields every exec hook has (Velero ExecHook), backup and restore alike. */
export const execHookBase = {
  container: z.string().optional(),
  command: z.array(z.string()).min(1),
  onError: z.enum(['Continue', 'Fail']).optional(),
};

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; problems: FieldProblem[] };

/** The outcome of a Validate step: the run it starts, or the problems of the request. */
export function validationOutcomeOf<R extends z.ZodType>(run: R) {
  return z.union([
    z.strictObject({ valid: z.literal(true), run }),
    z.strictObject({
      valid: z.literal(false),
      problems: z.array(z.strictObject({ path: z.string(), message: z.string() })),
      summary: z.string(),
    }),
  ]);
}

/** An invalid request as a step's outcome: the problems, and a summary one line each. */
export function rejectedRequest(problems: readonly { path: string; message: string }[]): {
  valid: false;
  problems: { path: string; message: string }[];
  summary: string;
} {
  return {
    valid: false,
    problems: [...problems],
    summary: problems.map((p) => `${p.path}: ${p.message}`).join('\n'),
  };
}

/** A zod error as field problems, with paths written `spec.includedNamespaces[2]`. */
export function problemsOf(error: z.ZodError, prefix = ''): { path: string; message: string }[] {
  return error.issues.map((issue) => {
    let path = prefix;
    for (const part of issue.path) {
      if (typeof part === 'number') path += `[${part}]`;
      else path += path ? `.${String(part)}` : String(part);
    }
    return { path: path || '(request)', message: issue.message };
  });
}
