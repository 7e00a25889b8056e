/**
 * The rules Kubernetes holds names and label syntax to (apimachinery's IsDNS1123Label,
 * IsDNS1123Subdomain, IsQualifiedName and IsValidLabelValue), and the patterns Velero takes in
 * place of namespace and resource names (a name, `*`, or a gobwas/glob of names). Each check
 * returns why a value is refused, in words a request's author can act on, or undefined. Pure;
 * never echoes more of a value than a short quote (a refused value may be a megabyte).
 */
import { compileGlob, isGlob } from './glob.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** The name part of a qualified name, and a label value. */
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

export const LABEL_MAX = 63;
export const SUBDOMAIN_MAX = 253;

const LABEL_SHAPE = 'must be a lowercase RFC 1123 label (a-z, 0-9 and "-", starting and ending alphanumeric)';
const SUBDOMAIN_SHAPE =
  'must be a lowercase RFC 1123 subdomain (a-z, 0-9, "-" and ".", starting and ending alphanumeric)';

/** A character as a problem quotes it: printable as itself, anything else by its code point. */
export function quoted(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  return code >= 0x20 && code < 0x7f ? `"${ch}"` : `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Namespace names, container names, label-like names (Kubernetes IsDNS1123Label). */
export function dnsLabelProblem(value: string): string | undefined {
  if (value === '') return 'must not be empty';
  if (value.length > LABEL_MAX) return `must be no more than ${LABEL_MAX} characters`;
  return DNS1123_LABEL.test(value) ? undefined : LABEL_SHAPE;
}

/** Most object names: ConfigMaps, storage locations, backups (Kubernetes IsDNS1123Subdomain). */
export function dnsSubdomainProblem(value: string): string | undefined {
  if (value === '') return 'must not be empty';
  if (value.length > SUBDOMAIN_MAX) return `must be no more than ${SUBDOMAIN_MAX} characters`;
  return DNS1123_SUBDOMAIN.test(value) ? undefined : SUBDOMAIN_SHAPE;
}

/** A label or annotation key: `[prefix/]name` (Kubernetes IsQualifiedName). */
export function qualifiedNameProblem(key: string): string | undefined {
  if (key === '') return 'must not be empty';
  const parts = key.split('/');
  if (parts.length > 2) return 'must be a name with an optional DNS prefix: at most one "/"';
  const name = parts.at(-1) ?? '';
  if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    if (prefix === '') return 'prefix part must not be empty';
    const problem = dnsSubdomainProblem(prefix);
    if (problem) return `prefix part ${problem}`;
  }
  if (name === '') return 'name part must not be empty';
  if (name.length > LABEL_MAX) return `name part must be no more than ${LABEL_MAX} characters`;
  return QUALIFIED_NAME.test(name)
    ? undefined
    : 'name part must consist of alphanumeric characters, "-", "_" or ".", starting and ending alphanumeric';
}

/** A label value: empty, or at most 63 characters of a qualified name's name part. */
export function labelValueProblem(value: string): string | undefined {
  if (value === '') return undefined;
  if (value.length > LABEL_MAX) return `must be no more than ${LABEL_MAX} characters`;
  return QUALIFIED_NAME.test(value)
    ? undefined
    : 'must be empty or consist of alphanumeric characters, "-", "_" or ".", starting and ending alphanumeric';
}

const GLOB_SHAPE = 'is not a valid glob pattern (an unclosed "[" or "{", or an empty "[]")';

/**
 * A namespace in an include or exclude list: `*`, a namespace name, or a glob of names (Velero
 * 1.18: `*`, `?`, `[a-z]`, `[!a]`, `{a,b}`; no `**`, no regex symbols). A glob must be one that
 * gobwas/glob compiles and that some namespace name could match.
 */
export function namespacePatternProblem(pattern: string): string | undefined {
  if (pattern === '*') return undefined;
  if (!isGlob(pattern)) return dnsLabelProblem(pattern);
  if (pattern.length > SUBDOMAIN_MAX) return `must be no more than ${SUBDOMAIN_MAX} characters`;
  if (pattern.includes('**')) return 'may not hold consecutive asterisks (Velero takes a single * only)';
  const symbol = /[|()\\]/.exec(pattern)?.[0];
  if (symbol) return `may not hold ${quoted(symbol)}: Velero's namespace globs take *, ?, [...] and {a,b}`;
  if (!compileGlob(pattern, { strict: true })) return GLOB_SHAPE;
  const shortest = shortestMatchShape(pattern);
  if (typeof shortest !== 'string') return shortest.problem;
  const problem = dnsLabelProblem(shortest);
  return problem ? `no namespace name can match it: a name it matches ${problem}` : undefined;
}

/**
 * The pattern with each wildcard as one letter, each class as one letter and each `{…}` as its
 * shortest alternative: the shape of the shortest name it matches. A problem when a literal part
 * holds a character no namespace name has. Assumes the pattern compiled (classes and braces close).
 */
function shortestMatchShape(pattern: string): string | { problem: string } {
  let shape = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i] ?? '';
    if (ch === '*' || ch === '?') shape += 'x';
    else if (ch === '[') {
      const end = pattern.indexOf(']', i + 1);
      const body = pattern.slice(i + 1, end);
      if (!/^!?[a-z0-9-]+$/.test(body))
        return { problem: `the class "[${body.slice(0, 20)}]" may only hold a-z, 0-9 and "-" (after "!")` };
      shape += 'x';
      i = end;
    } else if (ch === '{') {
      const end = pattern.indexOf('}', i + 1);
      const alternatives = pattern.slice(i + 1, end).split(',');
      const bad = alternatives.find((a) => !/^[a-z0-9*?-]*$/.test(a));
      if (bad !== undefined)
        return { problem: `the alternative "${bad.slice(0, 20)}" may only hold a-z, 0-9, "-", * and ?` };
      if (alternatives.every((a) => a === '')) return { problem: 'holds an empty "{}" pattern' };
      const shortestAlternative = alternatives.reduce((a, b) => (b.length < a.length ? b : a));
      shape += shortestAlternative.replace(/[*?]/g, 'x');
      i = end;
    } else if (/[a-z0-9-]/.test(ch)) shape += ch;
    else return { problem: `holds ${quoted(ch)}, which no namespace name has` };
  }
  return shape;
}

/**
 * A resource in an include or exclude list, as discovery resolves it (`pods`, `deployments.apps`,
 * `Deployment`, `deploy`) or a glob of such names (gobwas/glob, `.` a plain character).
 */
export function resourcePatternProblem(pattern: string): string | undefined {
  if (pattern === '') return 'must not be empty';
  if (pattern.length > SUBDOMAIN_MAX) return `must be no more than ${SUBDOMAIN_MAX} characters`;
  const bad = /[^A-Za-z0-9.*?[\]{},!-]/u.exec(pattern)?.[0];
  if (bad) return `holds ${quoted(bad)}, which no resource name has`;
  return compileGlob(pattern, { strict: true }) ? undefined : GLOB_SHAPE;
}
