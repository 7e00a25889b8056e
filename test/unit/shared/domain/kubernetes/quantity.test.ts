import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compareQuantities,
  isZeroQuantity,
  parseQuantity,
  type Quantity,
  quantityOf,
} from '../../../../../shared/domain/kubernetes/quantity.js';

const Ki = 1024n;
const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? (a < 0n ? -a : a) : gcd(b, a % b));
/** The quantity as a reduced fraction of bytes, for readable expectations. */
const bytes = (q: Quantity | undefined): string => {
  if (!q) return 'invalid';
  const d = gcd(q.numerator, q.denominator) || 1n;
  const [n, m] = [q.numerator / d, q.denominator / d];
  return m === 1n ? String(n) : `${n}/${m}`;
};

describe('Kubernetes quantities', () => {
  it.each([
    ['0', '0'],
    ['1', '1'],
    ['100', '100'],
    ['1Ki', String(Ki)],
    ['1Mi', String(Ki ** 2n)],
    ['10Gi', String(10n * Ki ** 3n)],
    ['2Ti', String(2n * Ki ** 4n)],
    ['1Pi', String(Ki ** 5n)],
    ['1Ei', String(Ki ** 6n)],
    ['1k', '1000'],
    ['5M', '5000000'],
    ['3G', '3000000000'],
    ['1T', '1000000000000'],
    ['1P', '1000000000000000'],
    ['1E', '1000000000000000000'],
    ['1.5Gi', String((3n * Ki ** 3n) / 2n)],
    ['0.5', '1/2'],
    ['.5k', '500'],
    ['1.', '1'],
    ['250m', '1/4'],
    ['1u', '1/1000000'],
    ['1n', '1/1000000000'],
    ['1e3', '1000'],
    ['1E3', '1000'],
    ['1.5e-3', '3/2000'],
    ['+2Ki', '2048'],
    ['-1Ki', '-1024'],
  ])('reads %s as %s bytes', (text, expected) => {
    expect(bytes(parseQuantity(text))).toBe(expected);
  });

  it.each([
    '',
    ' 1Gi',
    '1Gi ',
    '1 Gi',
    'Gi',
    '1GB',
    '1gi',
    '1K',
    '1KiB',
    '1.2.3',
    '.',
    '1e',
    '1e+',
    'e3',
    '1Gi,2Gi',
    '1e999',
    '9'.repeat(65),
  ])('refuses %j', (text) => {
    expect(parseQuantity(text)).toBeUndefined();
  });

  it('compares binary and decimal spellings of the same size as equal', () => {
    const a = parseQuantity('1Gi');
    const b = parseQuantity('1073741824');
    const c = parseQuantity('1.073741824G');
    expect(a && b && compareQuantities(a, b)).toBe(0);
    expect(a && c && compareQuantities(a, c)).toBe(0);
  });

  it('orders 1G below 1Gi and 999Mi below 1Gi', () => {
    const [g, gi, mi] = ['1G', '1Gi', '999Mi'].map((t) => parseQuantity(t) ?? quantityOf(-1));
    expect(g && gi && compareQuantities(g, gi)).toBe(-1);
    expect(mi && gi && compareQuantities(mi, gi)).toBe(-1);
    expect(gi && mi && compareQuantities(gi, mi)).toBe(1);
  });

  it('knows zero in any spelling', () => {
    for (const t of ['0', '0Gi', '0.0', '0e5', '-0']) {
      const q = parseQuantity(t);
      expect(q && isZeroQuantity(q)).toBe(true);
    }
    expect(isZeroQuantity(parseQuantity('1m') ?? quantityOf(0))).toBe(false);
  });

  it('orders quantities as their byte counts order (property)', () => {
    const suffixes = [
      ['', 1n],
      ['k', 1000n],
      ['Ki', 1024n],
      ['M', 1000n ** 2n],
      ['Mi', 1024n ** 2n],
      ['G', 1000n ** 3n],
      ['Gi', 1024n ** 3n],
      ['T', 1000n ** 4n],
      ['Ti', 1024n ** 4n],
    ] as const;
    const quantity = fc.tuple(fc.nat({ max: 100_000 }), fc.constantFrom(...suffixes));
    fc.assert(
      fc.property(quantity, quantity, ([n1, [s1, m1]], [n2, [s2, m2]]) => {
        const a = parseQuantity(`${n1}${s1}`);
        const b = parseQuantity(`${n2}${s2}`);
        const x = BigInt(n1) * m1;
        const y = BigInt(n2) * m2;
        const expected = x < y ? -1 : x > y ? 1 : 0;
        return a !== undefined && b !== undefined && compareQuantities(a, b) === expected;
      }),
    );
  });
});
