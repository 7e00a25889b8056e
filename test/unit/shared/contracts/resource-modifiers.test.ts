import { describe, expect, it } from 'vitest';
import {
  parseResourceModifiers,
  resolvedResourceModifiers,
  resourceModifiersFromConfigMap,
} from '../../../../shared/contracts/resource-modifiers.js';

const rules = (resourceModifierRules: unknown[], version = 'v1') => ({ version, resourceModifierRules });
const problems = (input: unknown) => {
  const result = parseResourceModifiers(input, 'inline');
  return result.ok ? [] : result.problems;
};

describe('resource modifier rule sets', () => {
  it('turns Velero’s rule set into rules with parsed values, one patch kind each', () => {
    const result = parseResourceModifiers(
      rules([
        {
          conditions: {
            groupResource: 'deployments.apps',
            resourceNameRegex: '^web',
            namespaces: ['shop'],
            labelSelector: { matchLabels: { app: 'web' } },
            matches: [{ path: '/spec/replicas', value: '2' }],
          },
          patches: [
            { operation: 'replace', path: '/spec/replicas', value: '1' },
            { operation: 'Add', path: '/metadata/labels/x', value: '"true"' },
            { operation: 'remove', path: '/metadata/labels/y' },
            { operation: 'copy', from: '/a', path: '/b' },
          ],
        },
        {
          conditions: { groupResource: 'pods' },
          mergePatches: [{ patchData: 'metadata:\n  labels:\n    a: b\n' }],
        },
        {
          conditions: { groupResource: 'pods' },
          strategicPatches: [{ patchData: '{"spec":{"containers":[{"name":"c","image":"i:2"}]}}' }],
        },
      ]),
      'inline',
    );
    expect(result).toEqual({
      ok: true,
      value: {
        rules: [
          {
            conditions: {
              groupResource: 'deployments.apps',
              resourceNameRegex: '^web',
              namespaces: ['shop'],
              labelSelector: { matchLabels: { app: 'web' } },
              matches: [{ path: '/spec/replicas', value: 2 }],
            },
            patch: {
              kind: 'json',
              operations: [
                { op: 'replace', path: '/spec/replicas', value: 1 },
                { op: 'add', path: '/metadata/labels/x', value: 'true' },
                { op: 'remove', path: '/metadata/labels/y' },
                { op: 'copy', from: '/a', path: '/b' },
              ],
            },
          },
          {
            conditions: { groupResource: 'pods' },
            patch: { kind: 'merge', patches: [{ metadata: { labels: { a: 'b' } } }] },
          },
          {
            conditions: { groupResource: 'pods' },
            patch: { kind: 'strategic', patches: [{ spec: { containers: [{ name: 'c', image: 'i:2' }] } }] },
          },
        ],
      },
    });
    if (result.ok)
      expect(resolvedResourceModifiers.parse(JSON.parse(JSON.stringify(result.value)))).toEqual(result.value);
  });

  it('accepts the version in any case, as Velero', () => {
    expect(
      problems(rules([{ conditions: { groupResource: 'pods' }, mergePatches: [{ patchData: '{}' }] }], 'V1')),
    ).toEqual([]);
  });

  const mergeOnly = { mergePatches: [{ patchData: '{"a": 1}' }] };
  it.each([
    {
      case: 'another version',
      input: rules([{ conditions: { groupResource: 'pods' }, ...mergeOnly }], 'v2'),
      path: 'inline.version',
    },
    { case: 'no rules', input: rules([]), path: 'inline.resourceModifierRules' },
    {
      case: 'no groupResource',
      input: rules([{ conditions: {}, ...mergeOnly }]),
      path: 'inline.resourceModifierRules[0].conditions.groupResource',
    },
    {
      case: 'an empty groupResource',
      input: rules([{ conditions: { groupResource: '' }, ...mergeOnly }]),
      path: 'inline.resourceModifierRules[0].conditions.groupResource',
    },
    {
      case: 'a glob that does not compile',
      input: rules([{ conditions: { groupResource: '[pods' }, ...mergeOnly }]),
      path: 'inline.resourceModifierRules[0].conditions.groupResource',
    },
    {
      case: 'a regex that does not compile',
      input: rules([{ conditions: { groupResource: 'pods', resourceNameRegex: '(' }, ...mergeOnly }]),
      path: 'inline.resourceModifierRules[0].conditions.resourceNameRegex',
    },
    {
      case: 'a bad label selector',
      input: rules([
        {
          conditions: {
            groupResource: 'pods',
            labelSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] },
          },
          ...mergeOnly,
        },
      ]),
      path: 'inline.resourceModifierRules[0].conditions.labelSelector.matchExpressions[0].values',
    },
    {
      case: 'a match without path',
      input: rules([{ conditions: { groupResource: 'pods', matches: [{ value: '1' }] }, ...mergeOnly }]),
      path: 'inline.resourceModifierRules[0].conditions.matches[0].path',
    },
    {
      case: 'an unknown condition',
      input: rules([{ conditions: { groupResource: 'pods', groupKind: 'pods' }, ...mergeOnly }]),
      path: 'inline.resourceModifierRules[0].conditions',
    },
    {
      case: 'an unknown operation',
      input: rules([
        { conditions: { groupResource: 'pods' }, patches: [{ operation: 'upsert', path: '/a' }] },
      ]),
      path: 'inline.resourceModifierRules[0].patches[0].operation',
    },
    {
      case: 'a path that is no JSON pointer',
      input: rules([
        { conditions: { groupResource: 'pods' }, patches: [{ operation: 'add', path: 'spec', value: 'x' }] },
      ]),
      path: 'inline.resourceModifierRules[0].patches[0].path',
    },
    {
      case: 'a copy without from',
      input: rules([{ conditions: { groupResource: 'pods' }, patches: [{ operation: 'copy', path: '/a' }] }]),
      path: 'inline.resourceModifierRules[0].patches[0].from',
    },
    {
      case: 'a value that is not a string (Velero’s type)',
      input: rules([
        { conditions: { groupResource: 'pods' }, patches: [{ operation: 'add', path: '/a', value: 3 }] },
      ]),
      path: 'inline.resourceModifierRules[0].patches[0].value',
    },
    {
      case: 'a value that starts like JSON but is not',
      input: rules([
        { conditions: { groupResource: 'pods' }, patches: [{ operation: 'add', path: '/a', value: '{a' }] },
      ]),
      path: 'inline.resourceModifierRules[0].patches[0].value',
    },
    {
      case: 'patchData that is no mapping',
      input: rules([{ conditions: { groupResource: 'pods' }, mergePatches: [{ patchData: '- a\n- b' }] }]),
      path: 'inline.resourceModifierRules[0].mergePatches[0].patchData',
    },
    {
      case: 'patchData that is no YAML',
      input: rules([{ conditions: { groupResource: 'pods' }, strategicPatches: [{ patchData: '{"a": [' }] }]),
      path: 'inline.resourceModifierRules[0].strategicPatches[0].patchData',
    },
    {
      case: 'a rule without patches',
      input: rules([{ conditions: { groupResource: 'pods' } }]),
      path: 'inline.resourceModifierRules[0]',
    },
    {
      case: 'a rule with two kinds of patches',
      input: rules([
        {
          conditions: { groupResource: 'pods' },
          patches: [{ operation: 'remove', path: '/a' }],
          ...mergeOnly,
        },
      ]),
      path: 'inline.resourceModifierRules[0]',
    },
  ])('refuses $case, naming $path', ({ input, path }) => {
    expect(problems(input).map((p) => p.path)).toContain(path);
  });

  it('reports every problem at once', () => {
    const found = problems(
      rules([
        { conditions: { groupResource: '' }, patches: [{ operation: 'x', path: '' }] },
        { conditions: { groupResource: 'pods', resourceNameRegex: '(' }, ...mergeOnly },
      ]),
    ).map((p) => p.path);
    expect(found).toEqual(
      expect.arrayContaining([
        'inline.resourceModifierRules[0].conditions.groupResource',
        'inline.resourceModifierRules[0].patches[0].operation',
        'inline.resourceModifierRules[0].patches[0].path',
        'inline.resourceModifierRules[1].conditions.resourceNameRegex',
      ]),
    );
  });
});

describe('resource modifiers from a ConfigMap', () => {
  const yaml = [
    'version: v1',
    'resourceModifierRules:',
    '- conditions:',
    '    groupResource: deployments.apps',
    '  patches:',
    '  - operation: replace',
    '    path: /spec/replicas',
    '    value: "1"',
  ].join('\n');

  it('reads the rules from its only data key', () => {
    expect(resourceModifiersFromConfigMap({ data: { 'rules.yaml': yaml } }, 'cm')).toMatchObject({
      ok: true,
      value: { rules: [{ patch: { kind: 'json', operations: [{ op: 'replace', value: 1 }] } }] },
    });
  });

  it('reads patch data as YAML 1.1, as Velero does: 0644 is an octal file mode', () => {
    const rules = [
      'version: v1',
      'resourceModifierRules:',
      '- conditions:',
      '    groupResource: pods',
      '  strategicPatches:',
      '  - patchData: |',
      '      {"spec": {"volumes": [{"name": "v", "secret": {"defaultMode": 0644}}]}}',
    ].join('\n');
    const result = resourceModifiersFromConfigMap({ data: { 'rules.yaml': rules } }, 'cm');
    expect(JSON.stringify(result)).toContain('"defaultMode":420');
  });

  it.each([
    { case: 'no data', configMap: {}, path: 'cm' },
    { case: 'two data keys', configMap: { data: { a: yaml, b: yaml } }, path: 'cm' },
    { case: 'data that is no YAML', configMap: { data: { r: 'version: [v1' } }, path: 'cm.data[r]' },
    {
      case: 'invalid rules',
      configMap: { data: { r: 'version: v1\nresourceModifierRules: []\n' } },
      path: 'cm.data[r].resourceModifierRules',
    },
    { case: 'an unknown field', configMap: { data: { r: `${yaml}\nextra: 1\n` } }, path: 'cm.data[r]' },
  ])('refuses $case, naming $path', ({ configMap, path }) => {
    const result = resourceModifiersFromConfigMap(configMap, 'cm');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems.map((p) => p.path)).toContain(path);
  });
});
