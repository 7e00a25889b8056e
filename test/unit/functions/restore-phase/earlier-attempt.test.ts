import { describe, expect, it } from 'vitest';
import { earlierAttempt } from '../../../../functions/restore-phase/earlier-attempt.js';

const STARTED = '2025-03-01T10:00:00.500Z';
const object = (labels: Record<string, string> | undefined, creationTimestamp?: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c', namespace: 'n', ...(labels ? { labels } : {}), creationTimestamp },
});

describe('recognising what an earlier attempt of the same restore wrote', () => {
  it.each([
    {
      title: 'an object of this restore created after it started was created by it',
      existing: object({ 'velero.io/restore-name': 'r1' }, '2025-03-01T10:00:05Z'),
      expected: 'created',
    },
    {
      title: 'creation within the second the restore started counts (timestamps have whole seconds)',
      existing: object({ 'velero.io/restore-name': 'r1' }, '2025-03-01T10:00:00Z'),
      expected: 'created',
    },
    {
      title: 'a cluster clock up to a minute behind still counts as created',
      existing: object({ 'velero.io/restore-name': 'r1' }, '2025-03-01T09:59:10Z'),
      expected: 'created',
    },
    {
      title: 'an older object carrying this restore’s label was updated by it',
      existing: object({ 'velero.io/restore-name': 'r1' }, '2025-02-01T00:00:00Z'),
      expected: 'updated',
    },
    {
      title: 'an object of another restore is not this restore’s',
      existing: object({ 'velero.io/restore-name': 'r0' }, '2025-03-01T10:00:05Z'),
      expected: undefined,
    },
    {
      title: 'an object without restore labels is not this restore’s',
      existing: object(undefined, '2025-03-01T10:00:05Z'),
      expected: undefined,
    },
    {
      title: 'a label of this restore without a creation time counts as created',
      existing: object({ 'velero.io/restore-name': 'r1' }),
      expected: 'created',
    },
  ])('$title', ({ existing, expected }) => {
    expect(earlierAttempt({ existing, restoreName: 'r1', startedAt: STARTED })).toBe(expected);
  });
});
