import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  emptyResults,
  mergeResults,
  type Result,
  type Results,
} from '../../../../../shared/domain/storage/results.js';

/**
 * What a merge must write, stated as a specification: each list is the left side's messages then
 * the right side's, a namespace's too (namespaces in the order they first appear); an empty list
 * or map is left out.
 */
function referenceMerge(a: Results, b: Results): Results {
  const both = (x?: readonly string[], y?: readonly string[]): string[] => (x ?? []).concat(y ?? []);
  const merge = (x: Result, y: Result): Result => {
    const names = [...new Set(Object.keys(x.namespaces ?? {}).concat(Object.keys(y.namespaces ?? {})))];
    const lists = { velero: both(x.velero, y.velero), cluster: both(x.cluster, y.cluster) };
    return Object.fromEntries([
      ...Object.entries(lists).filter(([, list]) => list.length > 0),
      ...(names.length > 0
        ? [
            [
              'namespaces',
              Object.fromEntries(names.map((n) => [n, both(x.namespaces?.[n], y.namespaces?.[n])])),
            ],
          ]
        : []),
    ]) as Result;
  };
  return { errors: merge(a.errors, b.errors), warnings: merge(a.warnings, b.warnings) };
}

const messages = fc.array(fc.constantFrom('m1', 'm2', 'm3'), { maxLength: 2 });
const result: fc.Arbitrary<Result> = fc.record(
  {
    velero: messages,
    cluster: messages,
    namespaces: fc.dictionary(fc.constantFrom('a', 'b'), messages, { maxKeys: 2 }),
  },
  { requiredKeys: [] },
);
const results: fc.Arbitrary<Results> = fc.oneof(
  fc.constant(emptyResults),
  fc.record({ errors: result, warnings: result }),
);

describe('mergeResults', () => {
  it('merges into the JSON its specification gives, empty sides included', () => {
    fc.assert(
      fc.property(results, results, (a, b) => {
        expect(JSON.stringify(mergeResults(a, b))).toBe(JSON.stringify(referenceMerge(a, b)));
      }),
      { numRuns: 500 },
    );
  });

  it('leaves nothing to write when neither side has a message', () => {
    expect(JSON.stringify(mergeResults(emptyResults, emptyResults))).toBe('{"errors":{},"warnings":{}}');
  });
});
