/**
 * Glob patterns as Velero matches namespace names (gobwas/glob semantics): `*` any run of
 * characters, `?` one character, `[abc]`/`[a-z]`/`[!a]` a class, `{a,b}` alternatives.
 * Pure; compiles to a RegExp anchored at both ends.
 */

const cache = new Map<string, RegExp>();

function escapeChar(ch: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(ch) ? `\\${ch}` : ch;
}

export interface GlobOptions {
  /** A character `*` and `?` do not cross (`**` does), as gobwas/glob's separators; none by default. */
  readonly separator?: string;
  /**
   * Refuse what gobwas/glob refuses (an unclosed `[` or `{`, an empty class, a trailing `\`)
   * instead of reading it as literally as possible.
   */
  readonly strict?: boolean;
}

/** The pattern as an anchored RegExp, or undefined when it does not compile (strict only). */
export function compileGlob(pattern: string, options: GlobOptions = {}): RegExp | undefined {
  const sep = options.separator;
  const any = sep ? `[^${escapeChar(sep)}]` : '.';
  let out = '';
  let depth = 0;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i] ?? '';
    if (ch === '\\') {
      if (i + 1 < pattern.length) out += escapeChar(pattern[++i] ?? '');
      else if (options.strict) return undefined;
      else out += '\\\\';
    } else if (ch === '*') {
      if (sep && pattern[i + 1] === '*') {
        out += '.*';
        i++;
      } else out += `${any}*`;
    } else if (ch === '?') {
      out += any;
    } else if (ch === '[') {
      const end = pattern.indexOf(']', i + 1);
      if (end < 0) {
        if (options.strict) return undefined;
        out += '\\[';
        continue;
      }
      let body = pattern.slice(i + 1, end);
      const negate = body.startsWith('!');
      if (negate) body = body.slice(1);
      if (body === '' && options.strict) return undefined;
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
  if (depth > 0 && options.strict) return undefined;
  out += ')'.repeat(depth);
  return new RegExp(`^(?:${out})$`);
}

export function isGlob(pattern: string): boolean {
  return /[*?[{]/.test(pattern);
}

export function globMatches(pattern: string, value: string): boolean {
  let re = cache.get(pattern);
  if (!re) {
    re = compileGlob(pattern) ?? /$^/;
    cache.set(pattern, re);
  }
  return re.test(value);
}
