/**
 * Glob patterns as Velero matches namespace names (gobwas/glob semantics): `*` any run of
 * characters, `?` one character, `[abc]`/`[a-z]`/`[!a]` a class, `{a,b}` alternatives.
 * Pure; compiles to a RegExp anchored at both ends.
 */

const cache = new Map<string, RegExp>();

function escapeChar(ch: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(ch) ? `\\${ch}` : ch;
}

function compile(pattern: string): RegExp {
  let out = '';
  let depth = 0;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i] ?? '';
    if (ch === '\\' && i + 1 < pattern.length) {
      out += escapeChar(pattern[++i] ?? '');
    } else if (ch === '*') {
      out += '.*';
    } else if (ch === '?') {
      out += '.';
    } else if (ch === '[') {
      const end = pattern.indexOf(']', i + 1);
      if (end < 0) {
        out += '\\[';
        continue;
      }
      let body = pattern.slice(i + 1, end);
      const negate = body.startsWith('!');
      if (negate) body = body.slice(1);
      out += `[${negate ? '^' : ''}${body.replace(/[\\\]^]/g, (c) => `\\${c}`)}]`;
      i = end;
    } else if (ch === '{') {
      depth++;
      out += '(?:';
    } else if (ch === '}' && depth > 0) {
      depth--;
      out += ')';
    } else if (ch === ',' && depth > 0) {
      out += '|';
    } else {
      out += escapeChar(ch);
    }
  }
  out += ')'.repeat(depth);
  return new RegExp(`^(?:${out})$`);
}

export function isGlob(pattern: string): boolean {
  return /[*?[{]/.test(pattern);
}

export function globMatches(pattern: string, value: string): boolean {
  let re = cache.get(pattern);
  if (!re) {
    re = compile(pattern);
    cache.set(pattern, re);
  }
  return re.test(value);
}
