import { describe, expect, it } from 'vitest';
import { parseSelector } from '../../../../../shared/domain/kubernetes/label-selector.js';

describe('parsing label selectors as kubectl writes them', () => {
  it.each([
    ['app=web', { matchLabels: { app: 'web' } }],
    ['app==web,tier=front', { matchLabels: { app: 'web', tier: 'front' } }],
    ['app!=web', { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['web'] }] }],
    ['tier in (a, b)', { matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] }],
    [
      'tier notin (a),app',
      {
        matchExpressions: [
          { key: 'tier', operator: 'NotIn', values: ['a'] },
          { key: 'app', operator: 'Exists' },
        ],
      },
    ],
    ['!legacy', { matchExpressions: [{ key: 'legacy', operator: 'DoesNotExist' }] }],
    ['example.com/role=db', { matchLabels: { 'example.com/role': 'db' } }],
  ])('%s', (text, expected) => {
    expect(parseSelector(text)).toEqual(expected);
  });

  it.each(['', 'a=b,,c=d', '=x', 'a in b'])('rejects %j', (text) => {
    expect(parseSelector(text)).toBeUndefined();
  });
});
