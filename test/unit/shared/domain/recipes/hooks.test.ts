import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseRecipe } from '../../../../../shared/contracts/recipe.js';
import type { HookPod } from '../../../../../shared/domain/hooks/backup.js';
import {
  type RecipeHookSpec,
  recipeHookTargets,
  recipeStepPhase,
} from '../../../../../shared/domain/recipes/hooks.js';

const pod = (namespace: string, name: string, overrides: Partial<HookPod> = {}): HookPod => ({
  namespace,
  name,
  labels: { component: 'cpdbr-tenant' },
  annotations: {},
  phase: 'Running',
  containers: ['main'],
  sidecars: [],
  claims: [],
  ...overrides,
});
const hook = (overrides: Partial<RecipeHookSpec> = {}): RecipeHookSpec => ({
  name: 'checkpoint',
  labelSelector: { matchLabels: { component: 'cpdbr-tenant' } },
  commands: [['/a.sh'], ['/b.sh', '--now']],
  timeoutMs: 600_000,
  onError: 'Fail',
  singlePodOnly: false,
  ...overrides,
});
const everywhere = { includes: [], excludes: [] };

describe('recipeHookTargets', () => {
  it('runs each command, in order, on every selected Running pod, sorted by namespace and name', () => {
    // Act
    const targets = recipeHookTargets({
      hook: hook(),
      pods: [pod('b', 'x'), pod('a', 'z'), pod('a', 'y'), pod('a', 'other', { labels: {} })],
      namespaces: everywhere,
      phase: 'pre',
    });

    // Assess
    expect(targets.failure).toBeUndefined();
    expect(targets.pods.map((t) => `${t.pod.namespace}/${t.pod.name}`)).toEqual(['a/y', 'a/z', 'b/x']);
    expect(targets.pods[0]?.hooks).toEqual([
      {
        hookName: 'checkpoint',
        source: 'recipe',
        phase: 'pre',
        container: 'main',
        command: ['/a.sh'],
        onError: 'Fail',
        timeoutMs: 600_000,
      },
      {
        hookName: 'checkpoint',
        source: 'recipe',
        phase: 'pre',
        container: 'main',
        command: ['/b.sh', '--now'],
        onError: 'Fail',
        timeoutMs: 600_000,
      },
    ]);
  });

  it('runs on the first Running pod only with singlePodOnly, warning about pods not Running', () => {
    // Act
    const targets = recipeHookTargets({
      hook: hook({ singlePodOnly: true }),
      pods: [pod('a', 'a-0', { phase: 'Pending' }), pod('a', 'a-1'), pod('a', 'a-2')],
      namespaces: everywhere,
      phase: 'pre',
    });

    // Assess
    expect(targets.pods.map((t) => t.pod.name)).toEqual(['a-1']);
    expect(targets.warnings).toEqual([
      'recipe hook checkpoint: pod a/a-0 is Pending, not Running: its hooks are not run',
    ]);
  });

  it('stays within the request’s namespaces and the hook’s own', () => {
    // Act
    const targets = recipeHookTargets({
      hook: hook({ excludedNamespaces: ['b'] }),
      pods: [pod('a', 'p'), pod('b', 'p'), pod('c', 'p')],
      namespaces: { includes: ['a', 'b'], excludes: [] },
      phase: 'post',
    });

    // Assess
    expect(targets.pods.map((t) => t.pod.namespace)).toEqual(['a']);
  });

  it.each([
    ['Fail', { failure: 'recipe hook checkpoint selects no Running pod', warnings: [] }],
    ['Continue', { warnings: ['recipe hook checkpoint selects no Running pod'] }],
  ] as const)('with no pod to run on and onError %s', (onError, expected) => {
    // Act
    const targets = recipeHookTargets({
      hook: hook({ onError }),
      pods: [],
      namespaces: everywhere,
      phase: 'pre',
    });

    // Assess
    expect(targets).toEqual({ pods: [], ...expected });
  });

  it('marks the hooks invalid in a pod without the named container', () => {
    // Act
    const targets = recipeHookTargets({
      hook: hook({ container: 'tools' }),
      pods: [pod('a', 'p')],
      namespaces: everywhere,
      phase: 'pre',
    });

    // Assess
    expect(targets.pods[0]?.hooks.map((h) => h.invalid)).toEqual([
      'pod a/p has no container "tools"',
      'pod a/p has no container "tools"',
    ]);
  });

  it('takes the hooks of the example recipe as parsed', () => {
    // Prepare
    const text = readFileSync(
      new URL('../../../../fixtures/recipes/checkpoint-recipe.yaml', import.meta.url),
      'utf8',
    );
    const parsed = parseRecipe(text);
    if (!parsed.ok) throw new Error('the example does not parse');
    const checkpoint: RecipeHookSpec | undefined = parsed.value.hooks.find((h) => h.name === 'checkpoint');
    if (!checkpoint) throw new Error('no checkpoint hook');

    // Act
    const targets = recipeHookTargets({
      hook: checkpoint,
      pods: [pod('cpd', 'tenant-1'), pod('cpd', 'tenant-0')],
      namespaces: everywhere,
      phase: 'pre',
    });

    // Assess
    expect(targets.pods.map((t) => [t.pod.name, t.hooks.map((h) => h.command)])).toEqual([
      ['tenant-0', [['/cpdbr-scripts/cpdbr/checkpoint_create.sh']]],
    ]);
  });
});

describe('recipeStepPhase', () => {
  it('logs hooks before the first group as pre and the rest as post', () => {
    // Prepare
    const steps = [
      { hook: 'checkpoint' },
      { hook: 'pre-backup' },
      { group: 'volumes' },
      { hook: 'post-backup' },
    ];

    // Act
    const phases = [0, 1, 3].map((i) => recipeStepPhase(steps, i));

    // Assess
    expect(phases).toEqual(['pre', 'pre', 'post']);
  });
});
