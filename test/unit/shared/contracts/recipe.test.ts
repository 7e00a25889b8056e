import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  parseRecipe,
  recipeFromConfigMap,
  recipeReference,
  validateRecipe,
} from '../../../../shared/contracts/recipe.js';

const example = readFileSync(
  new URL('../../../fixtures/recipes/checkpoint-recipe.yaml', import.meta.url),
  'utf8',
);

/** A small valid recipe to break one field at a time. */
const base = () => ({
  groups: <Record<string, unknown>[]>[
    { name: 'volumes', includedResourceTypes: ['persistentvolumeclaims'] },
    { name: 'rest', excludedResourceTypes: ['persistentvolumeclaims'] },
    { name: 'workloads', backupGroup: 'rest', includedResourceTypes: ['deployments.apps'] },
  ],
  hooks: <Record<string, unknown>[]>[{ name: 'freeze', commands: ['/freeze.sh'] }],
  workflows: {
    backup: [{ hook: 'freeze' }, { group: 'volumes' }, { group: 'rest' }] as Record<string, unknown>[],
    restore: [{ group: 'volumes' }, { group: 'workloads' }] as Record<string, unknown>[],
  },
});

const problems = (input: unknown) => {
  const result = validateRecipe(input);
  return result.ok ? [] : result.problems;
};

describe('the documented example recipe', () => {
  it('parses, with the backup and restore flows of seed 002', () => {
    // Act
    const result = parseRecipe(example);

    // Assess
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    const recipe = result.value;
    expect(recipe.workflows.backup).toEqual([
      { hook: 'checkpoint' },
      { hook: 'pre-backup' },
      { group: 'cpd-instance-volumes' },
      { hook: 'post-backup' },
      { group: 'cpd-instance-resources' },
    ]);
    expect(recipe.workflows.restore).toEqual([
      { group: 'cpd-instance-volumes' },
      { group: 'cpd-instance-pre-workload-resources' },
      { hook: 'pre-workload' },
      { group: 'cpd-instance-workload-resources' },
      { hook: 'post-workload' },
      { group: 'cpd-instance-operator-resources' },
    ]);
  });

  it('settles hook defaults, timeouts, commands and label selectors', () => {
    // Act
    const result = parseRecipe(example);

    // Assess
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    const [checkpoint, preBackup, , , postWorkload] = result.value.hooks;
    expect(checkpoint).toEqual({
      name: 'checkpoint',
      labelSelector: { matchLabels: { component: 'cpdbr-tenant' } },
      container: 'main',
      commands: [['/cpdbr-scripts/cpdbr/checkpoint_create.sh']],
      timeoutMs: 1_800_000,
      waitTimeoutMs: 600_000,
      onError: 'Fail',
      singlePodOnly: true,
    });
    expect(preBackup?.labelSelector).toEqual({ matchLabels: { component: 'cpdbr-tenant' } });
    expect(preBackup?.onError).toBe('Fail');
    expect(postWorkload).toMatchObject({
      timeoutMs: 3_600_000,
      onError: 'Continue',
      commands: [['/bin/sh', '-c', '/cpdbr-scripts/cpdbr/checkpoint_restore_posthooks.sh 2>&1']],
    });
    expect(result.value.groups[0]?.labelSelector).toEqual({
      matchExpressions: [{ key: 'icpdsupport/empty-on-nd-backup', operator: 'Exists' }],
    });
    expect(result.value.groups[1]?.labelSelector).toEqual({
      matchExpressions: [{ key: 'icpdsupport/ignore-on-nd-backup', operator: 'DoesNotExist' }],
    });
  });

  it('parses as docs/recipes.md shows the format', () => {
    // Prepare
    const doc = readFileSync(new URL('../../../../docs/recipes.md', import.meta.url), 'utf8');
    const format = /## Format\n\n```yaml\n([\s\S]*?)```/.exec(doc)?.[1];

    // Act
    const result = parseRecipe(format ?? '');

    // Assess
    expect(result.ok ? [] : result.problems).toEqual([]);
  });

  it('parses from a ConfigMap with one data key', () => {
    // Act
    const result = recipeFromConfigMap({
      namespace: 'cpd',
      name: 'cpd-instance-recipe',
      data: { 'recipe.yaml': example },
    });

    // Assess
    expect(result.ok).toBe(true);
  });
});

describe('recipe validation', () => {
  it('accepts the small recipe the other cases break', () => {
    expect(problems(base())).toEqual([]);
  });

  it('defaults a hook without timeout, waitTimeout or onError to 30 s, 10 min and Fail', () => {
    // Act
    const result = validateRecipe(base());

    // Assess
    if (!result.ok) throw new Error('invalid');
    expect(result.value.hooks[0]).toEqual({
      name: 'freeze',
      commands: [['/freeze.sh']],
      timeoutMs: 30_000,
      waitTimeoutMs: 600_000,
      onError: 'Fail',
      singlePodOnly: false,
    });
  });

  it.each<[string, (r: ReturnType<typeof base>) => unknown, { path: string; message: string }[]]>([
    [
      'a backup step naming an unknown group',
      (r) => {
        r.workflows.backup[1] = { group: 'volume' };
        return r;
      },
      [
        { path: 'workflows.backup[1].group', message: 'no group named "volume"' },
        // True of the recipe as written: nothing backs up "volumes" any more.
        {
          path: 'workflows.restore[0].group',
          message: 'group "volumes" is not backed up by the backup workflow, so there is nothing to restore',
        },
      ],
    ],
    [
      'a restore step naming an unknown hook',
      (r) => {
        r.workflows.restore.push({ hook: 'thaw' });
        return r;
      },
      [{ path: 'workflows.restore[2].hook', message: 'no hook named "thaw"' }],
    ],
    [
      'a step with a misspelt kind (seed 002 has "group_")',
      (r) => {
        r.workflows.backup[2] = { group_: 'rest' };
        return r;
      },
      [{ path: 'workflows.backup[2]', message: 'a step is either {group: <name>} or {hook: <name>}' }],
    ],
    [
      'a step naming both a group and a hook',
      (r) => {
        r.workflows.backup[0] = { group: 'rest', hook: 'freeze' };
        return r;
      },
      [{ path: 'workflows.backup[0]', message: 'a step is either {group: <name>} or {hook: <name>}' }],
    ],
    [
      'a duplicate group name',
      (r) => {
        r.groups.push({ name: 'volumes', includedResourceTypes: ['secrets'] });
        return r;
      },
      [{ path: 'groups[3].name', message: 'group "volumes" is already defined at groups[0]' }],
    ],
    [
      'a duplicate hook name',
      (r) => {
        r.hooks.push({ name: 'freeze', commands: ['/other.sh'] });
        return r;
      },
      [{ path: 'hooks[1].name', message: 'hook "freeze" is already defined at hooks[0]' }],
    ],
    [
      'a backupGroup naming no group',
      (r) => {
        r.groups[2] = { name: 'workloads', backupGroup: 'resources' };
        return r;
      },
      [{ path: 'groups[2].backupGroup', message: 'no group named "resources"' }],
    ],
    [
      'a backupGroup naming a restore group',
      (r) => {
        r.groups.push({ name: 'late', backupGroup: 'workloads' });
        return r;
      },
      [
        {
          path: 'groups[3].backupGroup',
          message:
            'group "workloads" is itself a restore group (it has backupGroup); name a group the backup takes',
        },
      ],
    ],
    [
      'a restore group in the backup workflow',
      (r) => {
        r.workflows.backup.push({ group: 'workloads' });
        return r;
      },
      [
        {
          path: 'workflows.backup[3].group',
          message: 'group "workloads" is a restore group (it has backupGroup) and cannot be backed up',
        },
      ],
    ],
    [
      'a restore step whose source the backup workflow does not take',
      (r) => {
        r.workflows.backup = [{ group: 'volumes' }];
        return r;
      },
      [
        {
          path: 'workflows.restore[1].group',
          message: 'group "workloads" restores from "rest", which the backup workflow does not back up',
        },
      ],
    ],
    [
      'a group taken twice by one workflow',
      (r) => {
        r.workflows.backup.push({ group: 'volumes' });
        return r;
      },
      [
        {
          path: 'workflows.backup[3].group',
          message: 'group "volumes" is already a step at workflows.backup[1]',
        },
      ],
    ],
    [
      'no workflow at all',
      (r) => ({ ...r, workflows: {} }),
      [{ path: 'workflows', message: 'needs a backup or a restore workflow (or both)' }],
    ],
    [
      'an unknown workflow name',
      (r) => ({ ...r, workflows: { ...r.workflows, cleanup: [{ hook: 'freeze' }] } }),
      [{ path: 'workflows.cleanup', message: 'unknown field' }],
    ],
    [
      'an empty workflow',
      (r) => ({ ...r, workflows: { backup: [] } }),
      [{ path: 'workflows.backup', message: 'Too small: expected array to have >=1 items' }],
    ],
    [
      'a misspelt group field (seed 002 has "includedResoures")',
      (r) => {
        r.groups[0] = { name: 'volumes', includedResoures: ['pvc'] } as never;
        return r;
      },
      [{ path: 'groups[0].includedResoures', message: 'unknown field' }],
    ],
    [
      'a malformed label selector string',
      (r) => {
        r.groups[1] = { name: 'rest', labelSelector: 'app in (a' } as never;
        return r;
      },
      [
        {
          path: 'groups[1].labelSelector',
          message: '"app in (a" is not a label selector (e.g. app=db,tier in (a,b))',
        },
      ],
    ],
    [
      'a hook without commands',
      (r) => {
        r.hooks[0] = { name: 'freeze', commands: [] };
        return r;
      },
      [{ path: 'hooks[0].commands', message: 'Too small: expected array to have >=1 items' }],
    ],
    [
      'an empty command',
      (r) => {
        r.hooks[0] = { name: 'freeze', commands: ['/a.sh', []] } as never;
        return r;
      },
      [{ path: 'hooks[0].commands[1]', message: 'must name the program to run' }],
    ],
    [
      'a zero timeout',
      (r) => {
        r.hooks[0] = { name: 'freeze', commands: ['/a.sh'], timeout: 0 } as never;
        return r;
      },
      [{ path: 'hooks[0].timeout', message: 'must be a positive number of seconds' }],
    ],
    [
      'a timeout that is not a duration',
      (r) => {
        r.hooks[0] = { name: 'freeze', commands: ['/a.sh'], timeout: 'ten minutes' } as never;
        return r;
      },
      [{ path: 'hooks[0].timeout', message: 'must be seconds (1800) or a positive duration (30m)' }],
    ],
    [
      'an onError other than Continue or Fail',
      (r) => {
        r.hooks[0] = { name: 'freeze', commands: ['/a.sh'], onError: 'fail' } as never;
        return r;
      },
      [{ path: 'hooks[0].onError', message: 'Invalid option: expected one of "Continue"|"Fail"' }],
    ],
    [
      'a hook type other than exec',
      (r) => {
        r.hooks[0] = { name: 'freeze', commands: ['/a.sh'], type: 'check' } as never;
        return r;
      },
      [{ path: 'hooks[0].type', message: 'Invalid input: expected "exec"' }],
    ],
  ])('names the path of %s', (_title, breakIt, expected) => {
    // Act
    const found = problems(breakIt(base()));

    // Assess
    expect(found).toEqual(expected);
  });

  it('reports every problem at once', () => {
    // Prepare
    const r = base();
    r.workflows.backup[0] = { hook: 'nope' };
    r.workflows.restore[0] = { group: 'nope' };

    // Act
    const found = problems(r);

    // Assess
    expect(found.map((p) => p.path)).toEqual(['workflows.backup[0].hook', 'workflows.restore[0].group']);
  });

  it('accepts a restore-only recipe without asking for a backup workflow', () => {
    // Prepare
    const r = { ...base(), workflows: { restore: [{ group: 'workloads' }, { hook: 'freeze' }] } };

    // Assess
    expect(problems(r)).toEqual([]);
  });
});

describe('recipes in YAML and ConfigMaps', () => {
  it('names the line of a YAML syntax error, under the data key', () => {
    // Act
    const result = recipeFromConfigMap({
      name: 'r',
      data: { 'recipe.yaml': 'groups:\n  - name: a\n   bad: [' },
    });

    // Assess
    if (result.ok) throw new Error('accepted');
    expect(result.problems[0]?.path).toBe('data["recipe.yaml"]');
    expect(result.problems[0]?.message).toMatch(/^YAML: .*line 3/);
  });

  it('prefixes schema problems with the data key', () => {
    // Act
    const result = recipeFromConfigMap({
      name: 'r',
      data: { recipe: 'workflows:\n  backup:\n    - group: missing\n' },
    });

    // Assess
    expect(result).toEqual({
      ok: false,
      problems: [{ path: 'data["recipe"].workflows.backup[0].group', message: 'no group named "missing"' }],
    });
  });

  it.each([
    [{}, 0],
    [{ a: 'x', b: 'y' }, 2],
  ])('refuses a ConfigMap whose data has %j keys', (data, count) => {
    // Act
    const result = recipeFromConfigMap({ namespace: 'cpd', name: 'r', data });

    // Assess
    expect(result).toEqual({
      ok: false,
      problems: [
        {
          path: 'data',
          message: `the recipe ConfigMap cpd/r must have exactly one data key, it has ${count}`,
        },
      ],
    });
  });

  it('refuses a duplicate YAML key', () => {
    // Act
    const result = parseRecipe('workflows: {}\nworkflows: {}\n');

    // Assess
    expect(result.ok).toBe(false);
  });

  it('refuses a document that is not a mapping', () => {
    // Act
    const result = parseRecipe('- just\n- a list\n');

    // Assess
    expect(result).toEqual({
      ok: false,
      problems: [{ path: '(recipe)', message: 'Invalid input: expected object, received array' }],
    });
  });
});

describe('recipeReference', () => {
  it.each([
    [{ configMap: { name: 'cpd-instance-recipe' } }, true],
    [{ configMap: { name: 'r', namespace: 'cpd' } }, true],
    [{ inline: { workflows: { backup: [{ hook: 'x' }] } } }, true],
    [{ configMap: { name: 'r' }, inline: {} }, false],
    [{ name: 'r' }, false],
  ])('%j valid: %s', (value, valid) => {
    expect(recipeReference.safeParse(value).success).toBe(valid);
  });
});

describe('recipe names, patterns, selectors and timeouts by Kubernetes’ and Velero’s rules (issue 16)', () => {
  it.each<[string, (r: ReturnType<typeof base>) => void, string, RegExp]>([
    [
      'an upper-case group namespace',
      (r) => Object.assign(r.groups[0] ?? {}, { includedNamespaces: ['UPPER'] }),
      'groups[0].includedNamespaces[0]',
      /RFC 1123 label/,
    ],
    [
      'an unclosed namespace glob',
      (r) => Object.assign(r.groups[1] ?? {}, { excludedNamespaces: ['ns-['] }),
      'groups[1].excludedNamespaces[0]',
      /glob/,
    ],
    [
      'a resource type glob that does not compile',
      (r) => Object.assign(r.groups[0] ?? {}, { includedResourceTypes: ['[bad'] }),
      'groups[0].includedResourceTypes[0]',
      /glob/,
    ],
    [
      'a selector value Kubernetes refuses',
      (r) => Object.assign(r.groups[0] ?? {}, { labelSelector: 'app in (a b!,c)' }),
      'groups[0].labelSelector',
      /not a label selector/,
    ],
    [
      'a selector key of 400 characters',
      (r) => Object.assign(r.hooks[0] ?? {}, { labelSelector: { matchLabels: { ['k'.repeat(400)]: 'x' } } }),
      'hooks[0].labelSelector.matchLabels',
      /63 characters/,
    ],
    [
      'a hook container that is no container name',
      (r) => Object.assign(r.hooks[0] ?? {}, { container: 'Main App' }),
      'hooks[0].container',
      /RFC 1123 label/,
    ],
    [
      'an overflowing hook timeout',
      (r) => Object.assign(r.hooks[0] ?? {}, { timeout: '9999999999999999999h' }),
      'hooks[0].timeout',
      /positive duration/,
    ],
    [
      'a timeout in seconds past what Go holds',
      (r) => Object.assign(r.hooks[0] ?? {}, { timeout: 9_999_999_999 }),
      'hooks[0].timeout',
      /at most 9223372036 seconds/,
    ],
  ])('refuses %s at its field path', (_, breakIt, path, message) => {
    const recipe = base();
    breakIt(recipe);
    const found = problems(recipe);
    expect(found.map((p) => p.path.startsWith(path))).toEqual([true]);
    expect(found[0]?.message).toMatch(message);
  });

  it('refuses a ConfigMap reference whose namespace is no namespace name', () => {
    expect(recipeReference.safeParse({ configMap: { name: 'r', namespace: 'Ops Team' } }).success).toBe(
      false,
    );
  });
});
