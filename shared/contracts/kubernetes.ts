/**
 * Schemas for the Kubernetes shapes Velero's objects embed: object metadata and label
 * selectors, and the validation of names, patterns and durations by Kubernetes' and Velero's own
 * rules (shared/domain/kubernetes/names.ts), each problem reported at its field path.
 */
import * as z from 'zod';
import type { FieldProblem } from '../domain/errors.js';
import { parseDuration } from '../domain/kubernetes/duration.js';
import {
  dnsLabelProblem,
  dnsSubdomainProblem,
  labelValueProblem,
  namespacePatternProblem,
  qualifiedNameProblem,
  resourcePatternProblem,
} from '../domain/kubernetes/names.js';

/** A string checked by one of the domain's name rules (its problem as the message). */
export function checkedString(problem: (value: string) => string | undefined) {
  return z.string().superRefine((value, ctx) => {
    const message = problem(value);
    if (message) ctx.addIssue({ code: 'custom', message });
  });
}

/** DNS-1123 subdomain, the rule for most object names (and for backup names, used in keys). */
export const dnsSubdomain = checkedString(dnsSubdomainProblem);

/** DNS-1123 label: namespace and container names. */
export const dnsLabel = checkedString(dnsLabelProblem);

/** A label or annotation key (`[prefix/]name`). */
export const qualifiedName = checkedString(qualifiedNameProblem);

export const labelValue = checkedString(labelValueProblem);

/** Labels as Kubernetes takes them: qualified-name keys, label values. */
export const labels = z.record(qualifiedName, labelValue);

export const labelSelectorRequirement = z.strictObject({
  key: qualifiedName,
  operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
  values: z.array(labelValue).optional(),
});

export const labelSelector = z
  .strictObject({
    matchLabels: labels.optional(),
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
  namespace: dnsLabel.optional(),
  labels: labels.optional(),
  annotations: z.record(qualifiedName, z.string()).optional(),
});

/** A list of names or patterns, none empty. */
export const names = z.array(z.string().min(1, { message: 'must not be empty' }));

/** Namespaces to include or exclude: names, `*`, or globs of names (Velero). */
export const namespacePatterns = z.array(checkedString(namespacePatternProblem));

/** Resources to include or exclude: names discovery resolves, `*`, or globs of them. */
export const resourcePatterns = z.array(checkedString(resourcePatternProblem));

/** A Go duration as Velero's API carries it (nothing past what Go's int64 nanoseconds hold). */
export const duration = z.string().refine((d) => parseDuration(d) !== undefined, {
  message: 'must be a duration such as 720h, 1h30m or 10m0s (at most 2562047h)',
});

/** A timeout: a Go duration, not negative (0: the default). */
export const timeout = z.string().superRefine((d, ctx) => {
  const ms = parseDuration(d);
  if (ms === undefined)
    ctx.addIssue({ code: 'custom', message: 'must be a duration such as 30s, 10m or 4h (at most 2562047h)' });
  else if (ms < 0) ctx.addIssue({ code: 'custom', message: 'must not be negative' });
});

/** What a hook applies to (Velero's hook spec selectors), shared by backup and restore hooks. */
export const hookSelector = {
  name: z.string().min(1),
  includedNamespaces: namespacePatterns.optional(),
  excludedNamespaces: namespacePatterns.optional(),
  includedResources: resourcePatterns.optional(),
  excludedResources: resourcePatterns.optional(),
  labelSelector: labelSelector.optional(),
};

/** The fields every exec hook has (Velero ExecHook), backup and restore alike. */
export const execHookBase = {
  /** A container name; empty or absent: the pod's first container (Velero). */
  container: checkedString((name) => (name === '' ? undefined : dnsLabelProblem(name))).optional(),
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

/**
 * A field path as problems name it: `spec.includedNamespaces[2]`, and a key that is no plain
 * identifier quoted, `matchLabels["app.kubernetes.io/name"]`, so that every path reads one way.
 */
export function fieldPath(prefix: string, parts: readonly PropertyKey[]): string {
  let path = prefix;
  for (const part of parts) {
    if (typeof part === 'number') path += `[${part}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(String(part))) path += path ? `.${String(part)}` : String(part);
    else path += `[${JSON.stringify(String(part).slice(0, 80))}]`;
  }
  return path;
}

/** One zod issue's message: a record key's own problems rather than zod's "Invalid key in record". */
export function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_key') return `key: ${issue.issues.map((i) => i.message).join('; ')}`;
  return issue.message;
}

/** A zod error as field problems, with paths written `spec.includedNamespaces[2]`. */
export function problemsOf(error: z.ZodError, prefix = ''): { path: string; message: string }[] {
  return error.issues.map((issue) => ({
    path: fieldPath(prefix, issue.path) || '(request)',
    message: issueMessage(issue),
  }));
}
