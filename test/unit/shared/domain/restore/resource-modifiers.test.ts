import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../../../../shared/domain/kubernetes/merge-patch.js';
import {
  applyResourceModifiers,
  conditionsHold,
  groupResourceGlob,
  jsonPatchValue,
  nameRegex,
  type ResourceModifierConditions,
  type ResourceModifierRule,
} from '../../../../../shared/domain/restore/resource-modifiers.js';

const deployment = (): JsonObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web-1', namespace: 'shop', labels: { app: 'web', tier: 'front' } },
  spec: { replicas: 2, template: { spec: { containers: [{ name: 'web', image: 'web:1' }] } } },
});

const holds = (
  conditions: ResourceModifierConditions,
  object = deployment(),
  groupResource = 'deployments.apps',
) => conditionsHold({ conditions, object, groupResource });

describe('resource modifier conditions', () => {
  it.each([
    { case: 'exact group resource', conditions: { groupResource: 'deployments.apps' }, expected: true },
    { case: 'another group resource', conditions: { groupResource: 'statefulsets.apps' }, expected: false },
    { case: '* within one segment', conditions: { groupResource: '*.apps' }, expected: true },
    { case: '* does not cross a dot', conditions: { groupResource: '*' }, expected: false },
    { case: '** crosses dots', conditions: { groupResource: '**' }, expected: true },
    {
      case: 'alternatives',
      conditions: { groupResource: '{deployments,statefulsets}.apps' },
      expected: true,
    },
    {
      case: 'name regex, unanchored',
      conditions: { groupResource: '*.apps', resourceNameRegex: 'eb-' },
      expected: true,
    },
    {
      case: 'name regex not matching',
      conditions: { groupResource: '*.apps', resourceNameRegex: '^db' },
      expected: false,
    },
    {
      case: 'Go case-insensitive flag',
      conditions: { groupResource: '*.apps', resourceNameRegex: '(?i)^WEB' },
      expected: true,
    },
    {
      case: 'namespace listed',
      conditions: { groupResource: '*.apps', namespaces: ['shop', 'db'] },
      expected: true,
    },
    { case: 'namespace glob', conditions: { groupResource: '*.apps', namespaces: ['sh*'] }, expected: true },
    {
      case: 'namespace not listed',
      conditions: { groupResource: '*.apps', namespaces: ['db'] },
      expected: false,
    },
    {
      case: 'label selector matching',
      conditions: { groupResource: '*.apps', labelSelector: { matchLabels: { app: 'web' } } },
      expected: true,
    },
    {
      case: 'label selector expression not matching',
      conditions: {
        groupResource: '*.apps',
        labelSelector: { matchExpressions: [{ key: 'tier', operator: 'NotIn' as const, values: ['front'] }] },
      },
      expected: false,
    },
    {
      case: 'matches: equal value',
      conditions: { groupResource: '*.apps', matches: [{ path: '/spec/replicas', value: 2 }] },
      expected: true,
    },
    {
      case: 'matches: all must hold',
      conditions: {
        groupResource: '*.apps',
        matches: [
          { path: '/spec/replicas', value: 2 },
          { path: '/spec/template/spec/containers/0/image', value: 'web:2' },
        ],
      },
      expected: false,
    },
    {
      case: 'matches: a missing path is no match',
      conditions: { groupResource: '*.apps', matches: [{ path: '/spec/paused/deep', value: true }] },
      expected: false,
    },
  ])('$case → $expected', ({ conditions, expected }) => {
    expect(holds(conditions)).toBe(expected);
  });

  it('ignores namespaces for a cluster-scoped object', () => {
    const pv = { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv-1' } };
    expect(holds({ groupResource: 'persistentvolumes', namespaces: ['shop'] }, pv, 'persistentvolumes')).toBe(
      true,
    );
  });

  it('compiles globs as gobwas/glob with "." separators, and refuses unclosed ones', () => {
    expect(groupResourceGlob('pods')?.test('pods')).toBe(true);
    expect(groupResourceGlob('?ods')?.test('pods')).toBe(true);
    expect(groupResourceGlob('[a-p]ods')?.test('pods')).toBe(true);
    expect(groupResourceGlob('[!p]ods')?.test('pods')).toBe(false);
    expect(groupResourceGlob('widgets.*.com')?.test('widgets.example.com')).toBe(true);
    expect(groupResourceGlob('widgets.*.com')?.test('widgets.a.b.com')).toBe(false);
    expect(groupResourceGlob('[abc')).toBeUndefined();
    expect(groupResourceGlob('{a,b')).toBeUndefined();
  });

  it('refuses regular expressions that do not compile', () => {
    expect(nameRegex('(')).toBeUndefined();
    expect(nameRegex('^a.*$')?.test('abc')).toBe(true);
  });
});

describe('JSON patch values as Velero turns strings into JSON', () => {
  it.each([
    ['', ''],
    ['premium', 'premium'],
    ['"3"', '3'],
    ['"true"', 'true'],
    ['3', 3],
    ['-1.5e2', -150],
    ['true', true],
    ['FALSE', false],
    ['null', null],
    ['{"a": [1]}', { a: [1] }],
    ['[1, "x"]', [1, 'x']],
    ['web:2', 'web:2'],
  ])('%j → %j', (text, value) => {
    expect(jsonPatchValue(text)).toEqual({ ok: true, value });
  });

  it('refuses a value that starts like JSON but is not', () => {
    expect(jsonPatchValue('{name: x}')).toMatchObject({ ok: false });
  });
});

describe('applying resource modifiers', () => {
  const apply = (rules: ResourceModifierRule[], object = deployment(), groupResource = 'deployments.apps') =>
    applyResourceModifiers({ modifiers: { rules }, object, groupResource });

  it('applies a JSON patch', () => {
    const out = apply([
      {
        conditions: { groupResource: 'deployments.apps' },
        patch: {
          kind: 'json',
          operations: [
            { op: 'replace', path: '/spec/replicas', value: 1 },
            { op: 'add', path: '/metadata/labels/restored', value: 'yes' },
            { op: 'remove', path: '/metadata/labels/tier' },
            { op: 'copy', from: '/metadata/labels/app', path: '/metadata/labels/copied' },
          ],
        },
      },
    ]);
    expect(out.problems).toEqual([]);
    expect(out.object).toMatchObject({
      spec: { replicas: 1 },
      metadata: { labels: { app: 'web', restored: 'yes', copied: 'web' } },
    });
    expect((out.object.metadata as JsonObject).labels).not.toHaveProperty('tier');
  });

  it('skips a JSON patch whose test fails, without a problem', () => {
    const out = apply([
      {
        conditions: { groupResource: 'deployments.apps' },
        patch: {
          kind: 'json',
          operations: [
            { op: 'test', path: '/spec/replicas', value: 3 },
            { op: 'replace', path: '/spec/replicas', value: 1 },
          ],
        },
      },
    ]);
    expect(out).toEqual({ object: deployment(), problems: [] });
  });

  it('reports a JSON patch that cannot apply, leaves the object as it was, and never quotes it', () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', namespace: 'shop' },
      data: { password: 'c2VjcmV0' },
    };
    const out = apply(
      [
        {
          conditions: { groupResource: 'secrets' },
          patch: {
            kind: 'json',
            operations: [
              { op: 'add', path: '/data/token', value: 'x' },
              { op: 'replace', path: '/data/missing', value: 'x' },
            ],
          },
        },
      ],
      secret,
      'secrets',
    );
    expect(out.object).toEqual(secret);
    expect(out.problems).toHaveLength(1);
    expect(out.problems[0]).toMatch(/^resource modifier rule 0: operation 1 \(replace \/data\/missing\)/);
    expect(out.problems[0]).not.toContain('c2VjcmV0');
  });

  it('applies merge patches in order', () => {
    const out = apply([
      {
        conditions: { groupResource: 'deployments.apps' },
        patch: {
          kind: 'merge',
          patches: [
            { metadata: { labels: { tier: null, env: 'dr' } } },
            { metadata: { labels: { env: 'drill' } } },
          ],
        },
      },
    ]);
    expect((out.object.metadata as JsonObject).labels).toEqual({ app: 'web', env: 'drill' });
  });

  it('applies a strategic patch, and reports one on a custom resource as Velero does', () => {
    const strategic: ResourceModifierRule = {
      conditions: { groupResource: '**' },
      patch: {
        kind: 'strategic',
        patches: [{ spec: { template: { spec: { containers: [{ name: 'web', image: 'web:2' }] } } } }],
      },
    };
    expect(apply([strategic]).object).toMatchObject({
      spec: { template: { spec: { containers: [{ name: 'web', image: 'web:2' }] } } },
    });
    const widget = {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w', namespace: 'shop' },
    };
    const out = apply([strategic], widget, 'widgets.example.com');
    expect(out.object).toEqual(widget);
    expect(out.problems[0]).toMatch(/no kind "Widget" is registered/);
  });

  it('applies every matching rule in order, each matched against the object before any rule', () => {
    const out = apply([
      {
        conditions: { groupResource: 'deployments.apps' },
        patch: { kind: 'json', operations: [{ op: 'replace', path: '/spec/replicas', value: 5 }] },
      },
      // Matches the original replicas (2), not the 5 the first rule wrote.
      {
        conditions: { groupResource: 'deployments.apps', matches: [{ path: '/spec/replicas', value: 2 }] },
        patch: { kind: 'merge', patches: [{ metadata: { labels: { seen: 'two' } } }] },
      },
      {
        conditions: { groupResource: 'deployments.apps', matches: [{ path: '/spec/replicas', value: 5 }] },
        patch: { kind: 'merge', patches: [{ metadata: { labels: { seen: 'five' } } }] },
      },
      // Conditions see the original labels, not those the rules before added.
      {
        conditions: { groupResource: 'deployments.apps', labelSelector: { matchLabels: { seen: 'two' } } },
        patch: { kind: 'merge', patches: [{ metadata: { labels: { never: 'x' } } }] },
      },
    ]);
    expect(out.object).toMatchObject({ spec: { replicas: 5 }, metadata: { labels: { seen: 'two' } } });
    expect((out.object.metadata as JsonObject).labels).not.toHaveProperty('never');
  });

  it('goes on after a failed rule', () => {
    const out = apply([
      {
        conditions: { groupResource: 'deployments.apps' },
        patch: { kind: 'json', operations: [{ op: 'remove', path: '/spec/nothing' }] },
      },
      {
        conditions: { groupResource: 'deployments.apps' },
        patch: { kind: 'json', operations: [{ op: 'replace', path: '/spec/replicas', value: 0 }] },
      },
    ]);
    expect(out.problems).toHaveLength(1);
    expect(out.object).toMatchObject({ spec: { replicas: 0 } });
  });
});
