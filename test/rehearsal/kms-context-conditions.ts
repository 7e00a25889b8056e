/**
 * KMS encryption-context conditions for the rehearsal's IAM evaluation. The simulator accepts
 * variable condition keys only in the `prefix/name` form, so `kms:EncryptionContext:<key>` (a
 * colon) is dropped as unknown and a statement conditioned on it never matches. Here such a
 * condition (StringEquals, StringLike, with or without IfExists) is decided against the call's
 * context first: a statement whose condition holds keeps its other conditions, one whose
 * condition fails cannot apply and is left out.
 */
const KEY = /^kms:encryptioncontext:(.+)$/i;
const OPERATORS = /^(StringEquals|StringLike)(IfExists)?$/;

interface Statement {
  readonly Condition?: Record<string, Record<string, unknown>>;
  readonly [k: string]: unknown;
}

const globOf = (pattern: string): RegExp =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );

function holds(operator: string, expected: unknown, actual: string | undefined): boolean {
  const [, kind, ifExists] = OPERATORS.exec(operator) ?? [];
  if (actual === undefined) return ifExists !== undefined;
  const values = [expected].flat().map(String);
  return values.some((v) => (kind === 'StringLike' ? globOf(v).test(actual) : v === actual));
}

/** The statement with its encryption-context conditions decided, or undefined if one fails. */
function decided(statement: Statement, context: Readonly<Record<string, string | string[]>>) {
  if (!statement.Condition) return statement;
  const condition: Record<string, Record<string, unknown>> = {};
  for (const [operator, pairs] of Object.entries(statement.Condition)) {
    const rest: Record<string, unknown> = {};
    for (const [key, expected] of Object.entries(pairs)) {
      const name = KEY.exec(key)?.[1];
      if (name === undefined || !OPERATORS.test(operator)) {
        rest[key] = expected;
        continue;
      }
      const actual = context[`kms:EncryptionContext:${name}`];
      if (!holds(operator, expected, Array.isArray(actual) ? actual[0] : actual)) return undefined;
    }
    if (Object.keys(rest).length > 0) condition[operator] = rest;
  }
  const { Condition: _, ...others } = statement;
  return Object.keys(condition).length > 0 ? { ...others, Condition: condition } : others;
}

export function withEncryptionContextDecided<P extends { name: string; policy: { Statement: unknown } }>(
  policies: readonly P[],
  context: Readonly<Record<string, string | string[]>> | undefined,
): P[] {
  return policies.map((p) => {
    const statements = [p.policy.Statement].flat() as Statement[];
    const kept = statements.flatMap((s) => decided(s, context ?? {}) ?? []);
    return { ...p, policy: { ...p.policy, Statement: kept } };
  });
}
