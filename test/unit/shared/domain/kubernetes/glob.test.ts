import { describe, expect, it } from 'vitest';
import { globMatches, isGlob } from '../../../../../shared/domain/kubernetes/glob.js';

describe('namespace globs', () => {
  it.each([
    ['*', 'anything', true],
    ['kube-*', 'kube-system', true],
    ['kube-*', 'my-kube-system', false],
    ['app-?', 'app-1', true],
    ['app-?', 'app-10', false],
    ['app-[0-9]', 'app-7', true],
    ['app-[!0-9]', 'app-7', false],
    ['app-[!0-9]', 'app-x', true],
    ['{prod,stage}-*', 'stage-web', true],
    ['{prod,stage}-*', 'dev-web', false],
    ['a.b', 'a.b', true],
    ['a.b', 'axb', false],
    ['exact', 'exact', true],
    ['exact', 'exactly', false],
  ])('%s matching %s is %s', (pattern, value, expected) => {
    expect(globMatches(pattern, value)).toBe(expected);
  });

  it('tells glob patterns from plain names', () => {
    expect(isGlob('kube-*')).toBe(true);
    expect(isGlob('{a,b}')).toBe(true);
    expect(isGlob('plain-name')).toBe(false);
  });
});
