import { describe, expect, it } from 'vitest';
import { selectsAll, shouldInclude } from '../../../../../shared/domain/kubernetes/includes-excludes.js';

describe("Velero's include/exclude lists", () => {
  it.each([
    { includes: [], excludes: [], value: 'a', expected: true },
    { includes: ['*'], excludes: [], value: 'a', expected: true },
    { includes: ['a'], excludes: [], value: 'b', expected: false },
    { includes: ['a', 'b'], excludes: [], value: 'b', expected: true },
    { includes: ['*'], excludes: ['b'], value: 'b', expected: false },
    { includes: ['b'], excludes: ['b'], value: 'b', expected: false },
    { includes: [], excludes: ['kube-*'], value: 'kube-system', expected: false },
    { includes: ['app-*'], excludes: [], value: 'app-one', expected: true },
    { includes: [], excludes: ['*'], value: 'a', expected: false },
  ])(
    'includes $includes excludes $excludes → $value included: $expected',
    ({ includes, excludes, value, expected }) => {
      expect(shouldInclude({ includes, excludes }, value)).toBe(expected);
    },
  );

  it('selects all only when nothing is excluded and everything included', () => {
    expect(selectsAll({ includes: [], excludes: [] })).toBe(true);
    expect(selectsAll({ includes: ['*'], excludes: [] })).toBe(true);
    expect(selectsAll({ includes: ['a'], excludes: [] })).toBe(false);
    expect(selectsAll({ includes: [], excludes: ['a'] })).toBe(false);
  });
});
