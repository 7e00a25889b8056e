import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ItemRef } from '../../../../../shared/domain/kubernetes/item-ref.js';
import {
  assignBlockToGroups,
  type GroupedItem,
  groupAdmits,
  groupSelects,
  type RecipeGroupFilter,
} from '../../../../../shared/domain/recipes/groups.js';

const ref = (resource: string, namespace: string, name: string, group = ''): ItemRef => ({
  group,
  version: 'v1',
  resource,
  namespace,
  name,
});
const item = (r: ItemRef, labels: Record<string, string> = {}): GroupedItem => ({ ref: r, labels });

// The seed-002 groups: the marked volumes, then everything else not marked to be ignored.
const volumes: RecipeGroupFilter = {
  name: 'volumes',
  includedResourceTypes: ['persistentvolumeclaims', 'persistentvolumes'],
  labelSelector: { matchExpressions: [{ key: 'backup/volume', operator: 'Exists' }] },
};
const resources: RecipeGroupFilter = {
  name: 'resources',
  excludedResourceTypes: ['persistentvolumeclaims', 'persistentvolumes', 'events', 'events.events.k8s.io'],
  labelSelector: { matchExpressions: [{ key: 'backup/ignore', operator: 'DoesNotExist' }] },
};

describe('recipe groups', () => {
  it.each([
    ['a type the group includes', volumes, ref('persistentvolumeclaims', 'app', 'data'), true],
    ['a type the group does not include', volumes, ref('pods', 'app', 'db'), false],
    ['an excluded type with its API group', resources, ref('events', 'app', 'e', 'events.k8s.io'), false],
    ['a type not excluded', resources, ref('deployments', 'app', 'web', 'apps'), true],
    [
      'a Namespace object by its own name',
      { name: 'g', includedNamespaces: ['app'] },
      ref('namespaces', '', 'app'),
      true,
    ],
    [
      'another Namespace object',
      { name: 'g', includedNamespaces: ['app'] },
      ref('namespaces', '', 'other'),
      false,
    ],
    [
      'an item of an excluded namespace',
      { name: 'g', excludedNamespaces: ['app'] },
      ref('pods', 'app', 'db'),
      false,
    ],
    [
      'a cluster-scoped item without cluster resources',
      { name: 'g', includeClusterResources: false },
      ref('persistentvolumes', '', 'pv-1'),
      false,
    ],
    ['a cluster-scoped item by default', { name: 'g' }, ref('persistentvolumes', '', 'pv-1'), true],
  ] as const)('admits %s: %s', (_, group, r, expected) => {
    expect(groupAdmits(group, r)).toBe(expected);
  });

  it('selects by labels only what the group admits', () => {
    expect(
      groupSelects(volumes, item(ref('persistentvolumeclaims', 'app', 'data'), { 'backup/volume': '' })),
    ).toBe(true);
    expect(groupSelects(volumes, item(ref('persistentvolumeclaims', 'app', 'data')))).toBe(false);
    expect(groupSelects(volumes, item(ref('pods', 'app', 'db'), { 'backup/volume': '' }))).toBe(false);
  });

  it('puts a marked PVC and its unmarked PV in the volume group, and the pod mounting them in the next one', () => {
    const block = [
      item(ref('pods', 'app', 'db')),
      item(ref('persistentvolumeclaims', 'app', 'data'), { 'backup/volume': 'yes' }),
      item(ref('persistentvolumes', '', 'pv-1')),
    ];
    expect(assignBlockToGroups({ items: block, groups: [volumes, resources] })).toEqual([1, 0, 0]);
  });

  it('leaves out what no group takes: an unmarked PVC, and a pod marked to be ignored', () => {
    const block = [
      item(ref('pods', 'app', 'db'), { 'backup/ignore': 'true' }),
      item(ref('persistentvolumeclaims', 'app', 'data')),
      item(ref('persistentvolumes', '', 'pv-1')),
    ];
    expect(assignBlockToGroups({ items: block, groups: [volumes, resources] })).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('gives every item at most one group, one that admits it, and the first that selects it', () => {
    const types = ['pods', 'persistentvolumeclaims', 'persistentvolumes', 'configmaps', 'namespaces'];
    const arbRef = fc
      .record({
        resource: fc.constantFrom(...types),
        ns: fc.constantFrom('a', 'b'),
        name: fc.constantFrom('x', 'y'),
      })
      .map(({ resource, ns, name }) =>
        ref(resource, resource === 'persistentvolumes' || resource === 'namespaces' ? '' : ns, name),
      );
    const arbItem = fc.record({
      r: arbRef,
      l: fc.dictionary(fc.constantFrom('k1', 'k2'), fc.constantFrom('v')),
    });
    const arbGroup = fc.record({
      name: fc.constant('g'),
      includedResourceTypes: fc.subarray(types),
      includedNamespaces: fc.subarray(['a', 'b']),
      labelSelector: fc.option(
        fc.record({ matchLabels: fc.dictionary(fc.constantFrom('k1', 'k2'), fc.constant('v')) }),
        {
          nil: undefined,
        },
      ),
    }) as fc.Arbitrary<RecipeGroupFilter>;
    fc.assert(
      fc.property(
        fc.array(arbItem, { maxLength: 8 }),
        fc.array(arbGroup, { maxLength: 4 }),
        (raw, groups) => {
          const items = raw.map(({ r, l }) => item(r, l));
          const assigned = assignBlockToGroups({ items, groups });
          expect(assigned).toHaveLength(items.length);
          for (const [i, g] of assigned.entries()) {
            const it = items[i] as GroupedItem;
            if (g !== undefined) expect(groupAdmits(groups[g] as RecipeGroupFilter, it.ref)).toBe(true);
            const firstSelecting = groups.findIndex((group) => groupSelects(group, it));
            if (firstSelecting >= 0) {
              expect(g).toBeDefined();
              expect(g as number).toBeLessThanOrEqual(firstSelecting);
            }
          }
        },
      ),
    );
  });
});
