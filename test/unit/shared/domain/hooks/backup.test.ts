import { describe, expect, it } from 'vitest';
import {
  type BackupHookSpec,
  backupHooksForPod,
  DEFAULT_EXEC_TIMEOUT_MS,
  type HookPod,
  hookPodOf,
  hookSelects,
  podHookSkipReason,
  timeoutMsOf,
} from '../../../../../shared/domain/hooks/backup.js';

const pod = (overrides: Partial<HookPod> = {}): HookPod => ({
  namespace: 'shop',
  name: 'db-0',
  labels: { app: 'db' },
  annotations: {},
  phase: 'Running',
  containers: ['main', 'metrics'],
  sidecars: [],
  claims: [],
  ...overrides,
});

describe('hookPodOf', () => {
  it('reads names, labels, annotations, phase, containers, sidecars and claims from a pod object', () => {
    // Prepare
    const object = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { namespace: 'shop', name: 'db-0', labels: { app: 'db' }, annotations: { a: 'b', n: 1 } },
      spec: {
        initContainers: [
          { name: 'setup', image: 'x' },
          { name: 'proxy', image: 'y', restartPolicy: 'Always' },
        ],
        containers: [{ name: 'main' }, { name: 'metrics' }],
        volumes: [
          { name: 'data', persistentVolumeClaim: { claimName: 'data-db-0' } },
          { name: 'tmp', emptyDir: {} },
        ],
      },
      status: { phase: 'Running' },
    };

    // Act
    const facts = hookPodOf(object);

    // Assess
    expect(facts).toEqual({
      namespace: 'shop',
      name: 'db-0',
      labels: { app: 'db' },
      annotations: { a: 'b' },
      phase: 'Running',
      containers: ['main', 'metrics'],
      sidecars: ['proxy'],
      claims: ['data-db-0'],
    });
  });

  it('reads an empty object without throwing', () => {
    // Act
    const facts = hookPodOf(null);

    // Assess
    expect(facts).toEqual({
      namespace: '',
      name: '',
      labels: {},
      annotations: {},
      containers: [],
      sidecars: [],
      claims: [],
    });
  });
});

describe('hookSelects', () => {
  const base = { name: 'h' };
  it.each([
    ['no selector fields select every pod', base, true],
    ['an included namespace', { ...base, includedNamespaces: ['shop'] }, true],
    ['a namespace glob', { ...base, includedNamespaces: ['sh*'] }, true],
    ['another namespace', { ...base, includedNamespaces: ['other'] }, false],
    [
      'an excluded namespace wins over *',
      { ...base, includedNamespaces: ['*'], excludedNamespaces: ['shop'] },
      false,
    ],
    ['included resource "pods"', { ...base, includedResources: ['pods'] }, true],
    ['included resource "pod" resolves to pods', { ...base, includedResources: ['pod'] }, true],
    ['included resource "po" resolves to pods', { ...base, includedResources: ['po'] }, true],
    ['included resource "Pod" resolves to pods', { ...base, includedResources: ['Pod'] }, true],
    ['included resources without pods', { ...base, includedResources: ['deployments.apps'] }, false],
    ['excluded resource "pod"', { ...base, excludedResources: ['pod'] }, false],
    ['a matching label selector', { ...base, labelSelector: { matchLabels: { app: 'db' } } }, true],
    [
      'a label selector that does not match',
      { ...base, labelSelector: { matchLabels: { app: 'web' } } },
      false,
    ],
    [
      'a set-based selector',
      {
        ...base,
        labelSelector: { matchExpressions: [{ key: 'app', operator: 'In' as const, values: ['db', 'x'] }] },
      },
      true,
    ],
    ['an empty label selector matches everything', { ...base, labelSelector: {} }, true],
  ])('%s', (_title, spec, expected) => {
    // Act
    const selected = hookSelects({ spec, namespace: 'shop', labels: { app: 'db' } });

    // Assess
    expect(selected).toBe(expected);
  });

  it('ignores the resource lists for restore hooks', () => {
    // Act
    const selected = hookSelects({
      spec: { name: 'h', includedResources: ['deployments.apps'] },
      namespace: 'shop',
      labels: {},
      ignoreResources: true,
    });

    // Assess
    expect(selected).toBe(true);
  });
});

describe('timeoutMsOf', () => {
  it.each([
    [undefined, DEFAULT_EXEC_TIMEOUT_MS],
    ['0s', DEFAULT_EXEC_TIMEOUT_MS],
    ['-5s', DEFAULT_EXEC_TIMEOUT_MS],
    ['soon', DEFAULT_EXEC_TIMEOUT_MS],
    ['90s', 90_000],
    ['1h30m', 5_400_000],
  ])('reads %s as %d ms', (value, expected) => {
    expect(timeoutMsOf(value, DEFAULT_EXEC_TIMEOUT_MS)).toBe(expected);
  });
});

describe('backupHooksForPod', () => {
  const specs: BackupHookSpec[] = [
    {
      name: 'freeze',
      labelSelector: { matchLabels: { app: 'db' } },
      pre: [
        { exec: { command: ['/freeze'] } },
        { exec: { container: 'metrics', command: ['/flush'], onError: 'Fail', timeout: '2m' } },
      ],
      post: [{ exec: { command: ['/thaw'] } }],
    },
    {
      name: 'web-only',
      labelSelector: { matchLabels: { app: 'web' } },
      pre: [{ exec: { command: ['/web'] } }],
    },
    { name: 'everyone', pre: [{ exec: { command: ['/all'], onError: 'Continue' } }] },
  ];

  it('takes the matching spec hooks in spec order, with defaults settled', () => {
    // Act
    const { hooks, warnings } = backupHooksForPod({ pod: pod(), phase: 'pre', specs });

    // Assess
    expect(warnings).toEqual([]);
    expect(hooks).toEqual([
      {
        hookName: 'freeze',
        source: 'spec',
        phase: 'pre',
        container: 'main',
        command: ['/freeze'],
        onError: 'Continue',
        timeoutMs: 30_000,
      },
      {
        hookName: 'freeze',
        source: 'spec',
        phase: 'pre',
        container: 'metrics',
        command: ['/flush'],
        onError: 'Fail',
        timeoutMs: 120_000,
      },
      {
        hookName: 'everyone',
        source: 'spec',
        phase: 'pre',
        container: 'main',
        command: ['/all'],
        onError: 'Continue',
        timeoutMs: 30_000,
      },
    ]);
  });

  it('takes the post list for the post phase', () => {
    // Act
    const { hooks } = backupHooksForPod({ pod: pod(), phase: 'post', specs });

    // Assess
    expect(hooks.map((h) => h.command)).toEqual([['/thaw']]);
  });

  it('runs only the annotation hook when the pod has one, ignoring the spec hooks', () => {
    // Prepare
    const annotated = pod({
      annotations: {
        'pre.hook.backup.velero.io/command': '["/bin/sh","-c","sync"]',
        'pre.hook.backup.velero.io/container': 'metrics',
      },
    });

    // Act
    const pre = backupHooksForPod({ pod: annotated, phase: 'pre', specs });
    const post = backupHooksForPod({ pod: annotated, phase: 'post', specs });

    // Assess
    expect(pre.hooks).toEqual([
      {
        hookName: '<from-annotation>',
        source: 'annotation',
        phase: 'pre',
        container: 'metrics',
        command: ['/bin/sh', '-c', 'sync'],
        onError: 'Continue',
        timeoutMs: 30_000,
      },
    ]);
    // Precedence is per phase: without a post annotation the spec's post hooks apply.
    expect(post.hooks.map((h) => h.hookName)).toEqual(['freeze']);
  });

  it('marks a hook naming a missing container invalid, and accepts a sidecar', () => {
    // Prepare
    const withSidecar = pod({ sidecars: ['proxy'] });
    const named: BackupHookSpec[] = [
      {
        name: 'h',
        pre: [
          { exec: { container: 'nope', command: ['x'] } },
          { exec: { container: 'proxy', command: ['y'] } },
        ],
      },
    ];

    // Act
    const { hooks } = backupHooksForPod({ pod: withSidecar, phase: 'pre', specs: named });

    // Assess
    expect(hooks[0]?.invalid).toBe('pod shop/db-0 has no container "nope"');
    expect(hooks[1]?.invalid).toBeUndefined();
    expect(hooks[1]?.container).toBe('proxy');
  });

  it('marks a hook invalid in a pod without containers', () => {
    // Act
    const { hooks } = backupHooksForPod({
      pod: pod({ containers: [] }),
      phase: 'pre',
      specs: [specs[2] as BackupHookSpec],
    });

    // Assess
    expect(hooks[0]?.invalid).toBe('pod shop/db-0 has no containers');
  });

  it('reports ignored annotation values as warnings naming the pod', () => {
    // Act
    const { hooks, warnings } = backupHooksForPod({
      pod: pod({
        annotations: { 'hook.backup.velero.io/command': 'x', 'hook.backup.velero.io/timeout': 'later' },
      }),
      phase: 'pre',
      specs: [],
    });

    // Assess
    expect(hooks.map((h) => h.timeoutMs)).toEqual([30_000]);
    expect(warnings).toEqual([
      'pod shop/db-0: annotation hook.backup.velero.io/timeout="later" is not a duration; the default is used',
    ]);
  });
});

describe('podHookSkipReason', () => {
  it.each([
    ['Running', undefined],
    ['Pending', 'pod shop/db-0 is Pending, not Running: its hooks are not run'],
    ['Succeeded', 'pod shop/db-0 is Succeeded, not Running: its hooks are not run'],
    [undefined, 'pod shop/db-0 is without a phase, not Running: its hooks are not run'],
  ])('a pod in phase %s', (phase, expected) => {
    // Act
    const reason = podHookSkipReason(phase === undefined ? { ...pod(), phase: undefined } : pod({ phase }));

    // Assess
    expect(reason).toBe(expected);
  });
});
