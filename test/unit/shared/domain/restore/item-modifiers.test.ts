import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../../../../shared/domain/kubernetes/merge-patch.js';
import { prepareItem, shouldRestoreStatus } from '../../../../../shared/domain/restore/item.js';
import type { ResourceModifiers } from '../../../../../shared/domain/restore/resource-modifiers.js';

const backedUp = (): JsonObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop', uid: 'u-1', resourceVersion: '7', labels: { app: 'web' } },
  spec: { replicas: 3 },
  status: { replicas: 3 },
});

const options = {
  groupResource: 'deployments.apps',
  backupName: 'b1',
  restoreName: 'r1',
  namespaceMapping: { shop: 'shop-dr' },
};

describe('preparing an item with resource modifiers, in Velero’s order', () => {
  it('matches namespaces and labels as backed up, then maps the namespace and adds the restore labels', () => {
    const resourceModifiers: ResourceModifiers = {
      rules: [
        {
          conditions: { groupResource: 'deployments.apps', namespaces: ['shop'] },
          patch: { kind: 'json', operations: [{ op: 'replace', path: '/spec/replicas', value: 1 }] },
        },
        // The mapped namespace and the restore labels are not there yet.
        {
          conditions: { groupResource: 'deployments.apps', namespaces: ['shop-dr'] },
          patch: { kind: 'json', operations: [{ op: 'replace', path: '/spec/replicas', value: 9 }] },
        },
        {
          conditions: {
            groupResource: 'deployments.apps',
            labelSelector: { matchLabels: { 'velero.io/restore-name': 'r1' } },
          },
          patch: { kind: 'json', operations: [{ op: 'replace', path: '/spec/replicas', value: 8 }] },
        },
        // The restore labels win over a rule that sets them.
        {
          conditions: { groupResource: 'deployments.apps' },
          patch: {
            kind: 'merge',
            patches: [{ metadata: { labels: { 'velero.io/restore-name': 'other', env: 'dr' } } }],
          },
        },
      ],
    };
    const { object, problems } = prepareItem(backedUp(), { ...options, resourceModifiers });
    expect(problems).toEqual([]);
    expect(object).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {
        name: 'web',
        namespace: 'shop-dr',
        labels: { app: 'web', env: 'dr', 'velero.io/backup-name': 'b1', 'velero.io/restore-name': 'r1' },
      },
      spec: { replicas: 1 },
    });
  });

  it('sees the object as Velero’s preparation left it: no status, no server-set metadata', () => {
    const resourceModifiers: ResourceModifiers = {
      rules: [
        {
          conditions: {
            groupResource: 'deployments.apps',
            matches: [{ path: '/status/replicas', value: 3 }],
          },
          patch: { kind: 'json', operations: [{ op: 'replace', path: '/spec/replicas', value: 0 }] },
        },
      ],
    };
    expect(prepareItem(backedUp(), { ...options, resourceModifiers }).object).toMatchObject({
      spec: { replicas: 3 },
    });
  });

  it('reports a failed rule and still gives the item', () => {
    const resourceModifiers: ResourceModifiers = {
      rules: [
        {
          conditions: { groupResource: '*.apps' },
          patch: { kind: 'json', operations: [{ op: 'remove', path: '/spec/paused' }] },
        },
      ],
    };
    const { object, problems } = prepareItem(backedUp(), { ...options, resourceModifiers });
    expect(problems).toEqual([
      expect.stringMatching(/^resource modifier rule 0: operation 0 \(remove \/spec\/paused\)/),
    ]);
    expect(object).toMatchObject({ metadata: { namespace: 'shop-dr' }, spec: { replicas: 3 } });
  });

  it('leaves namespaces alone, as Velero creates them without modifiers', () => {
    const resourceModifiers: ResourceModifiers = {
      rules: [
        {
          conditions: { groupResource: 'namespaces' },
          patch: { kind: 'merge', patches: [{ metadata: { labels: { x: 'y' } } }] },
        },
      ],
    };
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } };
    const { object } = prepareItem(ns, { ...options, groupResource: 'namespaces', resourceModifiers });
    expect((object.metadata as JsonObject).labels).not.toHaveProperty('x');
    expect((object.metadata as JsonObject).name).toBe('shop-dr');
  });
});

describe('whether the backed-up status is restored', () => {
  const withAnnotation = (value?: string): JsonObject => ({
    metadata: {
      name: 'w',
      ...(value === undefined ? {} : { annotations: { 'velero.io/restore-status': value } }),
    },
  });
  it.each([
    { case: 'no restoreStatus', restoreStatus: undefined, annotation: undefined, expected: false },
    {
      case: 'an empty restoreStatus (every resource)',
      restoreStatus: { includes: [], excludes: [] },
      annotation: undefined,
      expected: true,
    },
    {
      case: 'the resource included',
      restoreStatus: { includes: ['widgets.example.com'], excludes: [] },
      annotation: undefined,
      expected: true,
    },
    {
      case: 'another resource included',
      restoreStatus: { includes: ['pods'], excludes: [] },
      annotation: undefined,
      expected: false,
    },
    {
      case: '* with the resource excluded',
      restoreStatus: { includes: ['*'], excludes: ['widgets.example.com'] },
      annotation: undefined,
      expected: false,
    },
    {
      case: 'the annotation "true" without restoreStatus',
      restoreStatus: undefined,
      annotation: ' TRUE ',
      expected: true,
    },
    {
      case: 'the annotation "false" over an include',
      restoreStatus: { includes: ['*'], excludes: [] },
      annotation: 'false',
      expected: false,
    },
    {
      case: 'an invalid annotation',
      restoreStatus: { includes: ['*'], excludes: [] },
      annotation: 'yes',
      expected: true,
    },
  ])('$case → $expected', ({ restoreStatus, annotation, expected }) => {
    expect(
      shouldRestoreStatus({
        groupResource: 'widgets.example.com',
        object: withAnnotation(annotation),
        ...(restoreStatus ? { restoreStatus } : {}),
      }),
    ).toBe(expected);
  });
});
