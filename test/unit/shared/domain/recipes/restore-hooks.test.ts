import { describe, expect, it } from 'vitest';
import type { HookPod } from '../../../../../shared/domain/hooks/backup.js';
import {
  type RestoreRecipeHookSpec,
  restoreRecipeExecHooks,
  restoreRecipeHookPods,
  sourceNamespaceOf,
} from '../../../../../shared/domain/recipes/restore-hooks.js';

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
const hook = (overrides: Partial<RestoreRecipeHookSpec> = {}): RestoreRecipeHookSpec => ({
  name: 'post-workload',
  labelSelector: { matchLabels: { component: 'cpdbr-tenant' } },
  commands: [['/a.sh'], ['/b.sh', '--now']],
  timeoutMs: 600_000,
  waitTimeoutMs: 120_000,
  onError: 'Fail',
  singlePodOnly: false,
  ...overrides,
});
const everywhere = { includes: [], excludes: [] };

describe('restore recipe hooks', () => {
  it.each([
    ['a namespace restored into itself', 'app', {}, 'app'],
    ['the target of a mapping', 'app-copy', { app: 'app-copy' }, 'app'],
    ['a namespace mapped elsewhere', 'app', { app: 'app-copy' }, undefined],
  ])('finds the backed-up namespace of %s', (_, target, mapping, expected) => {
    expect(sourceNamespaceOf(target, mapping)).toBe(expected);
  });

  it('selects the pods of the namespaces restored into, by the backed-up names, whatever their phase', () => {
    // Act
    const pods = restoreRecipeHookPods({
      hook: hook({ includedNamespaces: ['app'] }),
      pods: [
        pod('app', 'left-behind'),
        pod('app-copy', 'b', { phase: 'Pending' }),
        pod('app-copy', 'a'),
        pod('other', 'c'),
        pod('app-copy', 'unlabelled', { labels: {} }),
      ],
      namespaces: { includes: ['app', 'other'], excludes: [] },
      namespaceMapping: { app: 'app-copy' },
    });

    // Assess
    expect(pods.map((p) => `${p.namespace}/${p.name}`)).toEqual(['app-copy/a', 'app-copy/b']);
  });

  it('takes a Running pod first when the hook runs on one pod only', () => {
    // Act
    const pods = restoreRecipeHookPods({
      hook: hook({ singlePodOnly: true }),
      pods: [pod('app', 'a', { phase: 'Pending' }), pod('app', 'b')],
      namespaces: everywhere,
      namespaceMapping: {},
    });

    // Assess
    expect(pods.map((p) => p.name)).toEqual(['b']);
  });

  it('makes one exec hook per command, with the hook’s container, timeouts and onError', () => {
    // Act
    const hooks = restoreRecipeExecHooks(
      pod('app', 'a', { containers: ['side', 'main'] }),
      hook({ container: 'main' }),
    );

    // Assess
    expect(hooks).toEqual({
      container: 'main',
      hooks: [
        expect.objectContaining({
          command: ['/a.sh'],
          timeoutMs: 600_000,
          waitTimeoutMs: 120_000,
          onError: 'Fail',
        }),
        expect.objectContaining({
          command: ['/b.sh', '--now'],
          source: 'recipe',
          phase: 'post',
          waitForReady: false,
        }),
      ],
    });
  });

  it('says why a hook cannot run in a pod without its container', () => {
    expect(restoreRecipeExecHooks(pod('app', 'a'), hook({ container: 'sidecar' })).invalid).toBe(
      'pod app/a has no container "sidecar"',
    );
  });
});
