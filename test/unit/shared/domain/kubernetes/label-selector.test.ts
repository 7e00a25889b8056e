import { describe, expect, it } from 'vitest';
import {
  itemSelected,
  type LabelSelector,
  selectorMatches,
  selectorToString,
} from '../../../../../shared/domain/kubernetes/label-selector.js';

const labels = { app: 'web', tier: 'front' };

describe('label selectors', () => {
  it.each([
    [{}, true],
    [{ matchLabels: { app: 'web' } }, true],
    [{ matchLabels: { app: 'db' } }, false],
    [{ matchExpressions: [{ key: 'tier', operator: 'In' as const, values: ['front', 'back'] }] }, true],
    [{ matchExpressions: [{ key: 'tier', operator: 'In' as const, values: ['back'] }] }, false],
    [{ matchExpressions: [{ key: 'tier', operator: 'NotIn' as const, values: ['back'] }] }, true],
    [{ matchExpressions: [{ key: 'missing', operator: 'NotIn' as const, values: ['x'] }] }, true],
    [{ matchExpressions: [{ key: 'app', operator: 'Exists' as const }] }, true],
    [{ matchExpressions: [{ key: 'missing', operator: 'Exists' as const }] }, false],
    [{ matchExpressions: [{ key: 'missing', operator: 'DoesNotExist' as const }] }, true],
    [
      { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'app', operator: 'DoesNotExist' as const }] },
      false,
    ],
  ])('%j matches: %s', (selector, expected) => {
    expect(selectorMatches(selector, labels)).toBe(expected);
  });

  it('ORs the orLabelSelectors and treats no selector as everything', () => {
    const or: LabelSelector[] = [{ matchLabels: { app: 'db' } }, { matchLabels: { tier: 'front' } }];
    expect(itemSelected({ orLabelSelectors: or }, labels)).toBe(true);
    expect(itemSelected({ orLabelSelectors: [{ matchLabels: { app: 'db' } }] }, labels)).toBe(false);
    expect(itemSelected({}, labels)).toBe(true);
  });

  it('renders the selector as the API query form', () => {
    expect(
      selectorToString({
        matchLabels: { app: 'web' },
        matchExpressions: [
          { key: 'tier', operator: 'In', values: ['front', 'back'] },
          { key: 'x', operator: 'Exists' },
          { key: 'y', operator: 'DoesNotExist' },
        ],
      }),
    ).toBe('app=web,tier in (back,front),x,!y');
  });
});
