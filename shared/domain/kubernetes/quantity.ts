/**
 * Kubernetes resource quantities (`10Gi`, `500M`, `1.5e3`, `250m`) as exact rationals, for
 * comparing volume capacities against a resource policy's `capacity` range.
 * Grammar and suffixes follow k8s.io/apimachinery `resource.ParseQuantity`: binary SI
 * (Ki Mi Gi Ti Pi Ei), decimal SI (n u m "" k M G T P E) and decimal exponents (e3, E-2).
 * Never uses floating point: 1Gi and 1073741824 must compare equal, and 0.1 + 0.2 must not drift.
 */

/** An exact value: numerator / denominator, the denominator positive. */
export interface Quantity {
  readonly numerator: bigint;
  readonly denominator: bigint;
}

const BINARY_SUFFIX: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_SUFFIX: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

// The exponent alternative comes before the bare `E` (exa) so `1E3` reads as 1000.
const QUANTITY = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)([eE][+-]?\d+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$/;

/** Bounds that keep a hostile quantity from growing a huge bigint; real capacities are far inside. */
const MAX_DIGITS = 64;
const MAX_EXPONENT = 64;

const pow10 = (n: number): bigint => 10n ** BigInt(n);

/** Parses a quantity; undefined when the text is not one (no partial parses, no whitespace). */
export function parseQuantity(text: string): Quantity | undefined {
  const match = QUANTITY.exec(text);
  if (!match) return undefined;
  const [, sign = '', number = '', suffix = ''] = match;
  const [whole = '', fraction = ''] = number.split('.');
  if (whole.length + fraction.length > MAX_DIGITS) return undefined;
  let numerator = BigInt(`${whole}${fraction}` || '0');
  let denominator = pow10(fraction.length);
  if (sign === '-') numerator = -numerator;
  let exponent10 = 0;
  const binary = BINARY_SUFFIX[suffix];
  const decimal = DECIMAL_SUFFIX[suffix];
  if (binary !== undefined) numerator *= 1n << BigInt(binary);
  else if (decimal !== undefined) exponent10 = decimal;
  else exponent10 = Number(suffix.slice(1));
  if (!Number.isSafeInteger(exponent10) || Math.abs(exponent10) > MAX_EXPONENT) return undefined;
  if (exponent10 >= 0) numerator *= pow10(exponent10);
  else denominator *= pow10(-exponent10);
  return { numerator, denominator };
}

/** A whole number of bytes as a quantity. */
export function quantityOf(value: bigint | number): Quantity {
  return { numerator: BigInt(value), denominator: 1n };
}

export const ZERO_QUANTITY: Quantity = quantityOf(0);

/** -1, 0 or 1 as a is less than, equal to or greater than b. */
export function compareQuantities(a: Quantity, b: Quantity): -1 | 0 | 1 {
  const left = a.numerator * b.denominator;
  const right = b.numerator * a.denominator;
  return left < right ? -1 : left > right ? 1 : 0;
}

export function isZeroQuantity(q: Quantity): boolean {
  return q.numerator === 0n;
}
