import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyMergePatch,
  createMergePatch,
  jsonEqual,
} from '../../../../../shared/domain/kubernetes/merge-patch.js';

describe('JSON merge patch (RFC 7386)', () => {
  // The examples of RFC 7386 appendix A.
  it.each([
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ])('patches %j with %j into %j', (target, patch, expected) => {
    expect(applyMergePatch(target, patch)).toEqual(expected);
  });

  it('never changes its inputs', () => {
    const target = { a: { b: 1 } };
    const patch = { a: { c: 2 } };
    applyMergePatch(target, patch);
    expect(target).toEqual({ a: { b: 1 } });
    expect(patch).toEqual({ a: { c: 2 } });
  });

  it('computes no patch between equal objects, whatever their key order', () => {
    expect(createMergePatch({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 })).toBeUndefined();
  });

  it('computes the changed keys only, removed keys as null and lists whole', () => {
    expect(
      createMergePatch(
        { keep: 1, change: { x: 1, y: 2 }, gone: true, list: [1, 2] },
        { keep: 1, change: { x: 1, y: 3 }, list: [1, 2, 3], added: 'a' },
      ),
    ).toEqual({ change: { y: 3 }, gone: null, list: [1, 2, 3], added: 'a' });
  });

  // Objects without nulls: a merge patch cannot express "set to null".
  const value = fc.letrec((tie) => ({
    json: fc.oneof(
      { depthSize: 'small' },
      fc.integer(),
      fc.string(),
      fc.boolean(),
      fc.array(tie('json')),
      tie('object'),
    ),
    object: fc.dictionary(fc.string(), tie('json'), { maxKeys: 4 }),
  }));

  it('keeps a __proto__ key as data, as JSON.parse does', () => {
    const to = JSON.parse('{"__proto__":{"x":1},"a":2}') as Record<string, unknown>;
    const patch = createMergePatch({}, to);
    expect(Object.keys(patch ?? {})).toEqual(['__proto__', 'a']);
    const applied = applyMergePatch({}, patch) as Record<string, unknown>;
    expect(jsonEqual(applied, to)).toBe(true);
    expect(Object.getPrototypeOf(applied)).toBe(Object.prototype);
  });

  it('a computed patch turns the first object into the second', () => {
    fc.assert(
      fc.property(value.object, value.object, (from, to) => {
        const a = from as Record<string, unknown>;
        const b = to as Record<string, unknown>;
        const patch = createMergePatch(a, b);
        expect(jsonEqual(patch === undefined ? a : applyMergePatch(a, patch), b)).toBe(true);
      }),
    );
  });
});
