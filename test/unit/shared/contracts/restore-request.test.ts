import { describe, expect, it } from 'vitest';
import {
  resourceModifierSource,
  validateRestoreRequest,
} from '../../../../shared/contracts/restore-request.js';

const request = (spec: Record<string, unknown>, name = 'restore-1') => ({
  cluster: 'dr',
  restore: { metadata: { name }, spec },
});
const paths = (input: unknown): string[] => {
  const result = validateRestoreRequest(input);
  return result.ok ? [] : result.problems.map((p) => p.path);
};

describe('the restore request', () => {
  it('accepts Velero’s restore fields and Lifeboat’s item selection and dry run', () => {
    expect(
      validateRestoreRequest(
        request({
          backupName: 'nightly',
          includedNamespaces: ['shop*'],
          excludedResources: ['secrets'],
          includeClusterResources: null,
          namespaceMapping: { shop: 'shop-dr' },
          restorePVs: true,
          preserveNodePorts: false,
          existingResourcePolicy: 'update',
          restoreStatus: { includedResources: ['widgets.example.com'] },
          hooks: {
            resources: [
              {
                name: 'h',
                postHooks: [{ exec: { command: ['true'], waitTimeout: '5m', waitForReady: true } }],
              },
            ],
          },
          itemOperationTimeout: '4h',
          resourceModifier: { kind: 'ConfigMap', name: 'mods' },
          includeItems: ['deployments.apps/shop/web', 'namespaces/shop'],
          dryRun: true,
        }),
      ),
    ).toMatchObject({ ok: true });
  });

  it.each([
    { case: 'neither backup nor schedule', spec: {}, paths: ['restore.spec.backupName'] },
    {
      case: 'both backup and schedule',
      spec: { backupName: 'a', scheduleName: 'b' },
      paths: ['restore.spec.backupName'],
    },
    {
      case: 'a non-restorable resource',
      spec: { backupName: 'a', includedResources: ['nodes'] },
      paths: ['restore.spec.includedResources[0]'],
    },
    {
      case: 'both selector kinds',
      spec: { backupName: 'a', labelSelector: {}, orLabelSelectors: [{}] },
      paths: ['restore.spec.orLabelSelectors'],
    },
    {
      case: 'an unknown policy',
      spec: { backupName: 'a', existingResourcePolicy: 'replace' },
      paths: ['restore.spec.existingResourcePolicy'],
    },
    {
      case: 'a mapping to an invalid name',
      spec: { backupName: 'a', namespaceMapping: { a: 'B_AD' } },
      paths: ['restore.spec.namespaceMapping.a'],
    },
    {
      case: 'two namespaces mapped to one',
      spec: { backupName: 'a', namespaceMapping: { a: 'x', b: 'x' } },
      paths: ['restore.spec.namespaceMapping'],
    },
    {
      case: 'a bad item selector',
      spec: { backupName: 'a', includeItems: ['just-a-name'] },
      paths: ['restore.spec.includeItems[0]'],
    },
    {
      case: 'a bad timeout',
      spec: { backupName: 'a', itemOperationTimeout: 'soon' },
      paths: ['restore.spec.itemOperationTimeout'],
    },
    {
      case: 'a resource modifier of another kind than ConfigMap',
      spec: { backupName: 'a', resourceModifier: { kind: 'Secret', name: 'mods' } },
      paths: ['restore.spec.resourceModifier.kind'],
    },
    {
      case: 'a resource modifier ConfigMap without name',
      spec: { backupName: 'a', resourceModifier: { kind: 'ConfigMap' } },
      paths: ['restore.spec.resourceModifier.name'],
    },
    {
      case: 'inline resource modifiers and a ConfigMap at once',
      spec: {
        backupName: 'a',
        resourceModifier: {
          kind: 'ConfigMap',
          name: 'mods',
          inline: {
            version: 'v1',
            resourceModifierRules: [
              { conditions: { groupResource: 'pods' }, mergePatches: [{ patchData: '{}' }] },
            ],
          },
        },
      },
      paths: ['restore.spec.resourceModifier'],
    },
    {
      case: 'invalid inline resource modifiers',
      spec: {
        backupName: 'a',
        resourceModifier: {
          inline: {
            version: 'v1',
            resourceModifierRules: [
              { conditions: { groupResource: 'pods' }, patches: [{ operation: 'nope', path: '/a' }] },
            ],
          },
        },
      },
      paths: ['restore.spec.resourceModifier.inline.resourceModifierRules[0].patches[0].operation'],
    },
  ])('reports $case by field path', ({ spec, paths: expected }) => {
    expect(paths(request(spec))).toEqual(expected);
  });
});

describe('the source of a restore’s resource modifiers', () => {
  const source = (resourceModifier: Record<string, unknown>, namespace?: string) => {
    const result = validateRestoreRequest({
      cluster: 'dr',
      restore: {
        metadata: { name: 'r', ...(namespace ? { namespace } : {}) },
        spec: { backupName: 'b', resourceModifier },
      },
    });
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    return resourceModifierSource(result.value);
  };

  it('is a ConfigMap in Velero’s namespace unless the reference or the restore names one', () => {
    expect(source({ kind: 'configmap', name: 'mods' })).toEqual({
      kind: 'configMap',
      namespace: 'velero',
      name: 'mods',
    });
    expect(source({ kind: 'ConfigMap', name: 'mods' }, 'backup-ops')).toEqual({
      kind: 'configMap',
      namespace: 'backup-ops',
      name: 'mods',
    });
    expect(source({ kind: 'ConfigMap', name: 'mods', namespace: 'dr' }, 'backup-ops')).toMatchObject({
      namespace: 'dr',
    });
  });

  it('is the inline rule set when one is given', () => {
    const inline = {
      version: 'v1',
      resourceModifierRules: [{ conditions: { groupResource: 'pods' }, mergePatches: [{ patchData: '{}' }] }],
    };
    expect(source({ inline })).toEqual({ kind: 'inline', input: inline });
  });
});

describe('the restore request’s recipe', () => {
  const recipe = {
    groups: [
      { name: 'everything' },
      { name: 'workloads', backupGroup: 'everything', includedResourceTypes: ['deployments.apps'] },
    ],
    hooks: [{ name: 'warm-up', commands: ['/warm.sh'] }],
    workflows: { backup: [{ group: 'everything' }], restore: [{ group: 'workloads' }, { hook: 'warm-up' }] },
  };
  const problems = (spec: Record<string, unknown>) => {
    const result = validateRestoreRequest(request({ backupName: 'nightly', ...spec }));
    return result.ok ? [] : result.problems;
  };

  it('accepts a recipe inline or by ConfigMap', () => {
    expect(problems({ recipe: { inline: recipe } })).toEqual([]);
    expect(problems({ recipe: { configMap: { name: 'cpd-recipe', namespace: 'cpd' } } })).toEqual([]);
  });

  it('names the field path of a problem in an inline recipe', () => {
    const broken = {
      ...recipe,
      groups: [recipe.groups[0], { ...recipe.groups[1], backupGroup: 'all' }],
      workflows: { ...recipe.workflows, restore: [{ group: 'workloads' }, { hook: 'warm' }] },
    };
    expect(problems({ recipe: { inline: broken } })).toEqual([
      { path: 'restore.spec.recipe.inline.groups[1].backupGroup', message: 'no group named "all"' },
      { path: 'restore.spec.recipe.inline.workflows.restore[1].hook', message: 'no hook named "warm"' },
    ]);
  });

  it('needs a restore workflow in an inline recipe', () => {
    expect(
      problems({ recipe: { inline: { ...recipe, workflows: { backup: recipe.workflows.backup } } } }),
    ).toEqual([
      {
        path: 'restore.spec.recipe.inline.workflows.restore',
        message: 'a restore needs the recipe to have a restore workflow',
      },
    ]);
  });

  it('refuses a reference that is neither inline nor a ConfigMap', () => {
    expect(problems({ recipe: { secret: 'x' } }).map((p) => p.path)).toEqual(['restore.spec.recipe']);
  });
});

describe('names, patterns, references and durations by Kubernetes’ and Velero’s rules (issue 16)', () => {
  const problemsAt = (spec: Record<string, unknown>) => {
    const result = validateRestoreRequest(request({ backupName: 'nightly', ...spec }));
    return result.ok ? [] : result.problems;
  };
  const hook = (postHook: Record<string, unknown>) => ({ resources: [{ name: 'h', postHooks: [postHook] }] });
  it.each<[string, Record<string, unknown>, string, RegExp]>([
    [
      'an upper-case namespace',
      { includedNamespaces: ['UPPER'] },
      'restore.spec.includedNamespaces[0]',
      /RFC 1123 label/,
    ],
    [
      'a namespace with a space',
      { excludedNamespaces: ['a b'] },
      'restore.spec.excludedNamespaces[0]',
      /RFC 1123 label/,
    ],
    [
      'an unclosed namespace glob',
      { includedNamespaces: ['ns-['] },
      'restore.spec.includedNamespaces[0]',
      /glob/,
    ],
    [
      'a 300-character namespace',
      { includedNamespaces: ['n'.repeat(300)] },
      'restore.spec.includedNamespaces[0]',
      /63/,
    ],
    [
      'a climbing namespace',
      { includedNamespaces: ['../x'] },
      'restore.spec.includedNamespaces[0]',
      /RFC 1123 label/,
    ],
    ['a bad resource glob', { includedResources: ['[bad'] }, 'restore.spec.includedResources[0]', /glob/],
    [
      'a climbing includeItems entry',
      { includeItems: ['x/../y'] },
      'restore.spec.includeItems[0]',
      /namespace/,
    ],
    [
      'an includeItems name that climbs',
      { includeItems: ['configmaps/app/..'] },
      'restore.spec.includeItems[0]',
      /"\.\."/,
    ],
    [
      'an includeItems namespace that is no namespace name',
      { includeItems: ['pods/a.b/web'] },
      'restore.spec.includeItems[0]',
      /namespace/,
    ],
    [
      'a mapping from a namespace that is no DNS label',
      { namespaceMapping: { 'a.b': 'c' } },
      'restore.spec.namespaceMapping["a.b"]',
      /RFC 1123 label/,
    ],
    [
      'a mapping to a namespace that is no DNS label',
      { namespaceMapping: { a: 'b.c' } },
      'restore.spec.namespaceMapping.a',
      /RFC 1123 label/,
    ],
    [
      'a mapping to a 64-character namespace',
      { namespaceMapping: { a: 'n'.repeat(64) } },
      'restore.spec.namespaceMapping.a',
      /63 characters/,
    ],
    [
      'a selector key with bad characters',
      { labelSelector: { matchLabels: { 'bad key': 'x' } } },
      'restore.spec.labelSelector.matchLabels["bad key"]',
      /name part/,
    ],
    [
      'an empty key in orLabelSelectors',
      { orLabelSelectors: [{ matchLabels: { '': 'b' } }] },
      'restore.spec.orLabelSelectors[0].matchLabels[""]',
      /must not be empty/,
    ],
    [
      'a negative itemOperationTimeout',
      { itemOperationTimeout: '-4h' },
      'restore.spec.itemOperationTimeout',
      /negative/,
    ],
    [
      'an overflowing itemOperationTimeout',
      { itemOperationTimeout: '9999999999999999999h' },
      'restore.spec.itemOperationTimeout',
      /duration/,
    ],
    [
      'an exec hook container that is no container name',
      { hooks: hook({ exec: { container: 'App', command: ['true'] } }) },
      'restore.spec.hooks.resources[0].postHooks[0].exec.container',
      /RFC 1123 label/,
    ],
    [
      'a negative exec hook timeout',
      { hooks: hook({ exec: { command: ['true'], execTimeout: '-1s' } }) },
      'restore.spec.hooks.resources[0].postHooks[0].exec.execTimeout',
      /negative/,
    ],
    [
      'an overflowing wait timeout',
      { hooks: hook({ exec: { command: ['true'], waitTimeout: '9999999999999999999h' } }) },
      'restore.spec.hooks.resources[0].postHooks[0].exec.waitTimeout',
      /duration/,
    ],
    [
      'a negative init hook timeout',
      { hooks: hook({ init: { initContainers: [], timeout: '-30s' } }) },
      'restore.spec.hooks.resources[0].postHooks[0].init.timeout',
      /negative/,
    ],
    [
      'a backup name that climbs out of backups/',
      { backupName: '../x' },
      'restore.spec.backupName',
      /subdomain/,
    ],
    [
      'a restore-status resource glob that does not compile',
      { restoreStatus: { includedResources: ['[bad'] } },
      'restore.spec.restoreStatus.includedResources[0]',
      /glob/,
    ],
    [
      'a resource modifier ConfigMap namespace that is no namespace name',
      { resourceModifier: { kind: 'ConfigMap', name: 'm', namespace: 'Mods!' } },
      'restore.spec.resourceModifier.namespace',
      /RFC 1123 label/,
    ],
    [
      'a resource modifier condition namespace that is no namespace name',
      {
        resourceModifier: {
          inline: {
            version: 'v1',
            resourceModifierRules: [
              {
                conditions: { groupResource: 'pods', namespaces: ['a b'] },
                mergePatches: [{ patchData: '{}' }],
              },
            ],
          },
        },
      },
      'restore.spec.resourceModifier.inline.resourceModifierRules[0].conditions.namespaces[0]',
      /RFC 1123 label/,
    ],
  ])('refuses %s at its field path', (_, spec, path, message) => {
    const found = problemsAt(spec);
    expect(found.map((p) => p.path)).toEqual([path]);
    expect(found[0]?.message).toMatch(message);
  });

  it.each([
    { includeItems: ['deployments.apps/shop/web', 'clusterroles/system:controller:x', 'namespaces/shop'] },
    { namespaceMapping: { shop: 'shop-dr', 'a-1': 'b-2' } },
    { includedNamespaces: ['shop-*'], excludedNamespaces: ['shop-[0-9]'] },
  ])('accepts what Kubernetes and Velero accept: %j', (spec) => {
    expect(validateRestoreRequest(request({ backupName: 'nightly', ...spec }))).toMatchObject({ ok: true });
  });
});
