import { describe, expect, it } from 'vitest';
import { hookPodOf } from '../../../../../shared/domain/hooks/backup.js';
import {
  containerHookState,
  hookWaitExpired,
  initContainerProblem,
  longestHookWaitMs,
  type RestoreHookSpec,
  restoreExecHooksForPod,
  restoreInitHookProblems,
  withRestoreInitHooks,
} from '../../../../../shared/domain/hooks/restore.js';

const podObject = (
  options: {
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    initContainers?: Record<string, unknown>[];
    namespace?: string;
  } = {},
): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    namespace: options.namespace ?? 'shop',
    name: 'db-0',
    labels: options.labels ?? { app: 'db' },
    annotations: options.annotations ?? {},
  },
  spec: {
    ...(options.initContainers ? { initContainers: options.initContainers } : {}),
    containers: [
      { name: 'main', image: 'db' },
      { name: 'metrics', image: 'm' },
    ],
  },
});

const initNames = (pod: Record<string, unknown>): string[] =>
  ((pod.spec as { initContainers?: { name: string }[] }).initContainers ?? []).map((c) => c.name);

const initSpec = (name: string, containers: string[], selector?: RestoreHookSpec): RestoreHookSpec => ({
  ...selector,
  name,
  postHooks: [
    { init: { initContainers: containers.map((c) => ({ name: c, image: 'busybox', command: ['true'] })) } },
  ],
});

describe('withRestoreInitHooks', () => {
  it('puts the spec hooks’ init containers first, in spec order, before the pod’s own', () => {
    // Prepare
    const pod = podObject({ initContainers: [{ name: 'own', image: 'x' }] });
    const specs = [initSpec('a', ['a1', 'a2']), initSpec('b', ['b1'])];

    // Act
    const outcome = withRestoreInitHooks({ pod, specs, restoreName: 'r1' });

    // Assess
    if (!outcome.ok) throw new Error(outcome.error);
    expect(initNames(outcome.pod)).toEqual(['a1', 'a2', 'b1', 'own']);
    expect(outcome.added).toEqual(['a1', 'a2', 'b1']);
    expect(initNames(pod)).toEqual(['own']);
  });

  it.each(['restore-wait', 'restic-wait'])('keeps a leading %s init container first', (wait) => {
    // Prepare
    const pod = podObject({
      initContainers: [
        { name: wait, image: 'velero' },
        { name: 'own', image: 'x' },
      ],
    });

    // Act
    const outcome = withRestoreInitHooks({ pod, specs: [initSpec('a', ['a1'])], restoreName: 'r1' });

    // Assess
    if (!outcome.ok) throw new Error(outcome.error);
    expect(initNames(outcome.pod)).toEqual([wait, 'a1', 'own']);
  });

  it('uses only the annotation’s init container when the pod has one', () => {
    // Prepare
    const pod = podObject({
      annotations: {
        'init.hook.restore.velero.io/container-image': 'busybox:1.36',
        'init.hook.restore.velero.io/container-name': 'prepare',
        'init.hook.restore.velero.io/command': '["/bin/sh","-c","ls"]',
      },
    });

    // Act
    const outcome = withRestoreInitHooks({ pod, specs: [initSpec('a', ['a1'])], restoreName: 'r1' });

    // Assess
    if (!outcome.ok) throw new Error(outcome.error);
    expect((outcome.pod.spec as { initContainers: unknown[] }).initContainers).toEqual([
      { name: 'prepare', image: 'busybox:1.36', command: ['/bin/sh', '-c', 'ls'] },
    ]);
  });

  it('names an unnamed annotation init container the same way on every try', () => {
    // Prepare
    const pod = podObject({ annotations: { 'init.hook.restore.velero.io/container-image': 'img' } });

    // Act
    const first = withRestoreInitHooks({ pod, specs: [], restoreName: 'r1' });
    const again = withRestoreInitHooks({ pod, specs: [], restoreName: 'r1' });
    const other = withRestoreInitHooks({ pod, specs: [], restoreName: 'r2' });

    // Assess
    if (!first.ok || !again.ok || !other.ok) throw new Error('unexpected error');
    expect(first.added[0]).toMatch(/^velero-restore-init-[0-9a-f]{8}$/);
    expect(again.added).toEqual(first.added);
    expect(other.added).not.toEqual(first.added);
  });

  it('selects spec hooks by the pod’s (target) namespace and labels, ignoring resource lists', () => {
    // Prepare
    const pod = podObject({ namespace: 'shop-dr' });
    const specs = [
      initSpec('other-ns', ['x'], { name: '', includedNamespaces: ['shop'] }),
      initSpec('target-ns', ['y'], {
        name: '',
        includedNamespaces: ['shop-dr'],
        includedResources: ['deployments'],
      }),
      initSpec('labels', ['z'], { name: '', labelSelector: { matchLabels: { app: 'web' } } }),
    ];

    // Act
    const outcome = withRestoreInitHooks({ pod, specs, restoreName: 'r1' });

    // Assess
    if (!outcome.ok) throw new Error(outcome.error);
    expect(outcome.added).toEqual(['y']);
  });

  it('returns the pod unchanged when no hook applies', () => {
    // Prepare
    const pod = podObject({ initContainers: [{ name: 'own', image: 'x' }] });

    // Act
    const outcome = withRestoreInitHooks({ pod, specs: [], restoreName: 'r1' });

    // Assess
    expect(outcome).toEqual({ ok: true, pod, added: [] });
  });

  it('refuses a spec init container without image or command, naming its path', () => {
    // Prepare
    const specs: RestoreHookSpec[] = [
      { name: 'ok', postHooks: [{ exec: { command: ['x'] } }] },
      { name: 'bad', postHooks: [{ init: { initContainers: [{ name: 'c' }] } }] },
    ];

    // Act
    const outcome = withRestoreInitHooks({ pod: podObject(), specs, restoreName: 'r1' });

    // Assess
    expect(outcome).toEqual({
      ok: false,
      error:
        'spec.hooks.resources[1].postHooks[0].init.initContainers[0]: an init container hook needs image, command',
    });
  });
});

describe('restoreInitHookProblems', () => {
  it('lists every refused spec init container by its path', () => {
    // Prepare
    const specs: RestoreHookSpec[] = [
      initSpec('fine', ['a']),
      {
        name: 'bad',
        postHooks: [
          { exec: { command: ['x'] } },
          {
            init: {
              initContainers: [
                { name: 'ok', image: 'i', command: ['c'] },
                { image: 'i', command: ['c'] },
              ],
            },
          },
        ],
      },
    ];

    // Act
    const problems = restoreInitHookProblems(specs);

    // Assess
    expect(problems).toEqual([
      {
        path: 'spec.hooks.resources[1].postHooks[1].init.initContainers[1]',
        message: 'an init container hook needs name',
      },
    ]);
  });
});

describe('initContainerProblem', () => {
  it.each([
    [{ name: 'a', image: 'b', command: ['c'] }, undefined],
    [{ name: 'a', image: 'b', command: [] }, 'an init container hook needs command'],
    [{}, 'an init container hook needs name, image, command'],
  ])('%j', (container, expected) => {
    expect(initContainerProblem(container)).toBe(expected);
  });
});

describe('restoreExecHooksForPod', () => {
  const specs: RestoreHookSpec[] = [
    {
      name: 'warm',
      labelSelector: { matchLabels: { app: 'db' } },
      postHooks: [
        { exec: { command: ['/warm'], execTimeout: '1m', waitTimeout: '5m', waitForReady: true } },
        { exec: { container: 'metrics', command: ['/m'], onError: 'Fail' } },
        { exec: { command: ['/again'] } },
        { exec: { container: 'gone', command: ['/never'] } },
      ],
    },
  ];

  it('groups the spec exec hooks by container, with defaults, dropping hooks for missing containers', () => {
    // Act
    const { byContainer, warnings } = restoreExecHooksForPod({ pod: hookPodOf(podObject()), specs });

    // Assess
    expect(byContainer).toEqual([
      {
        container: 'main',
        hooks: [
          {
            hookName: 'warm',
            source: 'spec',
            phase: 'post',
            container: 'main',
            command: ['/warm'],
            onError: 'Continue',
            timeoutMs: 60_000,
            waitTimeoutMs: 300_000,
            waitForReady: true,
          },
          {
            hookName: 'warm',
            source: 'spec',
            phase: 'post',
            container: 'main',
            command: ['/again'],
            onError: 'Continue',
            timeoutMs: 30_000,
            waitForReady: false,
          },
        ],
      },
      {
        container: 'metrics',
        hooks: [
          {
            hookName: 'warm',
            source: 'spec',
            phase: 'post',
            container: 'metrics',
            command: ['/m'],
            onError: 'Fail',
            timeoutMs: 30_000,
            waitForReady: false,
          },
        ],
      },
    ]);
    expect(warnings).toEqual([
      'pod shop/db-0 has no container "gone": its post-restore exec hook warm is dropped',
    ]);
  });

  it('uses only the annotation hook when the pod has one', () => {
    // Prepare
    const pod = hookPodOf(
      podObject({
        annotations: {
          'post.hook.restore.velero.io/command': '/restored.sh',
          'post.hook.restore.velero.io/wait-timeout': '0s',
        },
      }),
    );

    // Act
    const { byContainer } = restoreExecHooksForPod({ pod, specs });

    // Assess
    expect(byContainer).toEqual([
      {
        container: 'main',
        hooks: [
          {
            hookName: '<from-annotation>',
            source: 'annotation',
            phase: 'post',
            container: 'main',
            command: ['/restored.sh'],
            onError: 'Continue',
            timeoutMs: 30_000,
            waitForReady: false,
          },
        ],
      },
    ]);
  });
});

describe('waiting for a container', () => {
  const group = (waitForReady: boolean) =>
    restoreExecHooksForPod({
      pod: hookPodOf(podObject()),
      specs: [{ name: 'h', postHooks: [{ exec: { command: ['x'], waitForReady } }] }],
    }).byContainer[0] ?? { container: 'main', hooks: [] };
  const status = (phase: string, state: Record<string, unknown>, ready: boolean) => ({
    status: { phase, containerStatuses: [{ name: 'main', state, ready }] },
  });

  it.each([
    ['running, not waiting for ready', status('Running', { running: {} }, false), false, 'up'],
    ['running but not ready, waiting for ready', status('Running', { running: {} }, false), true, 'waiting'],
    ['running and ready, waiting for ready', status('Running', { running: {} }, true), true, 'up'],
    [
      'still creating',
      status('Pending', { waiting: { reason: 'ContainerCreating' } }, false),
      false,
      'waiting',
    ],
    ['without status', {}, false, 'waiting'],
    ['in a pod that Succeeded', status('Succeeded', { terminated: {} }, false), false, 'ended'],
    ['in a pod that Failed', status('Failed', { terminated: {} }, false), false, 'ended'],
  ])('a container %s', (_title, pod, waitForReady, expected) => {
    expect(containerHookState({ pod, container: group(waitForReady) })).toBe(expected);
  });

  it('expires a hook only past its own wait timeout', () => {
    // Prepare
    const [limited, unlimited] =
      restoreExecHooksForPod({
        pod: hookPodOf(podObject()),
        specs: [
          {
            name: 'h',
            postHooks: [{ exec: { command: ['x'], waitTimeout: '1m' } }, { exec: { command: ['y'] } }],
          },
        ],
      }).byContainer[0]?.hooks ?? [];
    if (!limited || !unlimited) throw new Error('hooks missing');

    // Assess
    expect(hookWaitExpired(limited, 60_000)).toBe(false);
    expect(hookWaitExpired(limited, 60_001)).toBe(true);
    expect(hookWaitExpired(unlimited, 86_400_000)).toBe(false);
  });

  it('watches the pod as long as the longest wait, or without limit when a hook has none', () => {
    // Prepare
    const grouped = (waits: (string | undefined)[]) =>
      restoreExecHooksForPod({
        pod: hookPodOf(podObject()),
        specs: [
          {
            name: 'h',
            postHooks: waits.map((w) => ({ exec: { command: ['x'], ...(w ? { waitTimeout: w } : {}) } })),
          },
        ],
      }).byContainer;

    // Assess
    expect(longestHookWaitMs(grouped(['1m', '3m']))).toBe(180_000);
    expect(longestHookWaitMs(grouped(['1m', undefined]))).toBeUndefined();
  });
});
