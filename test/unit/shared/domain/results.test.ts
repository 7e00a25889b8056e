import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { emptyResults, mergeResults, type Result, type Results } from '../../../../shared/domain/results.js';

/** A merge field by field, as first written: the JSON the results file must keep. */
function referenceMerge(a: Results, b: Results): Results {
  const merge = (x: Result, y: Result): Result => {
    const namespaces: Record<string, string[]> = {};
    for (const source of [x.namespaces ?? {}, y.namespaces ?? {}]) {
      for (const [ns, list] of Object.entries(source)) namespaces[ns] = [...(namespaces[ns] ?? []), ...list];
    }
    const velero = [...(x.velero ?? []), ...(y.velero ?? [])];
    const cluster = [...(x.cluster ?? []), ...(y.cluster ?? [])];
    return {
      ...(velero.length > 0 ? { velero } : {}),
      ...(cluster.length > 0 ? { cluster } : {}),
      ...(Object.keys(namespaces).length > 0 ? { namespaces } : {}),
    };
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
  it('merges into the JSON of the field-by-field merge, empty sides included', () => {
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
