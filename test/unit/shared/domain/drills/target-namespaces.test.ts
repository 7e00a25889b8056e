import { describe, expect, it } from 'vitest';
import { expectedItems } from '../../../../../shared/domain/drills/expected-items.js';
import {
  drillTargetNamespaces,
  namespaceClearing,
  restoresThatMade,
  type SeenNamespace,
} from '../../../../../shared/domain/drills/target-namespaces.js';

describe("a drill's target namespaces", () => {
  it('are the namespaces of every item and every Namespace of the backup, under the mappings', () => {
    const items = expectedItems({
      resourceList: {
        'v1/Namespace': ['shop', 'tools'],
        'v1/ConfigMap': ['shop/web-config', 'db/settings'],
        'rbac.authorization.k8s.io/v1/ClusterRole': ['reader'],
      },
      namespaceMapping: { shop: 'shop-dr', db: 'db-dr' },
    });
    expect(drillTargetNamespaces(items)).toEqual(['db-dr', 'shop-dr', 'tools']);
  });
});

describe('clearing the target namespaces before a drill restores', () => {
  const seen = (name: string, more: Partial<SeenNamespace> = {}): SeenNamespace => ({
    name,
    exists: true,
    terminating: false,
    ...more,
  });

  it.each<[string, SeenNamespace, 'toDelete' | 'deleting' | 'kept' | 'none']>([
    ['an absent namespace is left to the restore', seen('a', { exists: false }), 'none'],
    ["an earlier drill's namespace is deleted", seen('a', { restoreName: 'weekly-1' }), 'toDelete'],
    ['a namespace being deleted is waited on', seen('a', { terminating: true }), 'deleting'],
    ['a namespace no restore made is kept', seen('a'), 'kept'],
    ["a restore's namespace that was no drill's is kept", seen('a', { restoreName: 'manual' }), 'kept'],
    ["the drill's own namespace is never deleted", seen('a', { restoreName: 'weekly-2' }), 'kept'],
  ])('%s', (_, namespace, expected) => {
    const clearing = namespaceClearing({
      seen: [namespace],
      drill: 'weekly-2',
      drills: new Set(['weekly-1', 'weekly-2']),
    });
    const where = (['toDelete', 'deleting', 'kept'] as const).filter((k) => clearing[k].includes('a'));
    expect(where).toEqual(expected === 'none' ? [] : [expected]);
  });

  it('asks only about the restores that made namespaces still there', () => {
    expect(
      restoresThatMade([
        seen('a', { restoreName: 'r1' }),
        seen('b', { restoreName: 'r1' }),
        seen('c', { restoreName: 'r2', exists: false }),
        seen('d'),
      ]),
    ).toEqual(['r1']);
  });
});
