import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ItemFacts } from '../../../../../shared/domain/backup/item-blocks.js';
import type { BackupHookSpec, HookPod, PodExecHook } from '../../../../../shared/domain/hooks/backup.js';
import {
  type CommandResult,
  hookRunEvents,
  hookStatusOf,
  itemsAfterPreHooks,
  planBlockHooks,
  postHookPods,
  runPodHooks,
} from '../../../../../shared/domain/hooks/plan.js';
import type { ItemRef } from '../../../../../shared/domain/kubernetes/item-ref.js';

const ref = (resource: string, namespace: string, name: string): ItemRef => ({
  group: '',
  version: 'v1',
  resource,
  namespace,
  name,
});
const hookPod = (name: string, overrides: Partial<HookPod> = {}): HookPod => ({
  namespace: 'shop',
  name,
  labels: { app: 'db' },
  annotations: {},
  phase: 'Running',
  containers: ['main'],
  sidecars: [],
  claims: [],
  ...overrides,
});
const hook = (overrides: Partial<PodExecHook> = {}): PodExecHook => ({
  hookName: 'h',
  source: 'spec',
  phase: 'pre',
  container: 'main',
  command: ['x'],
  onError: 'Continue',
  timeoutMs: 30_000,
  ...overrides,
});
const ok = (stdout = ''): CommandResult => ({
  exitCode: 0,
  stdout,
  stderr: '',
  timedOut: false,
  durationMs: 5,
});
const exit = (code: number): CommandResult => ({
  exitCode: code,
  stdout: '',
  stderr: 'bad',
  timedOut: false,
  durationMs: 5,
});

describe('planBlockHooks', () => {
  const specs: BackupHookSpec[] = [
    { name: 'freeze', pre: [{ exec: { command: ['/freeze'] } }], post: [{ exec: { command: ['/thaw'] } }] },
  ];

  it('plans pre and post hooks for each Running pod of the block, in block order', () => {
    // Prepare
    const items = [
      ref('pods', 'shop', 'b'),
      ref('persistentvolumeclaims', 'shop', 'data'),
      ref('pods', 'shop', 'a'),
    ];

    // Act
    const plan = planBlockHooks({ items, pods: [hookPod('a'), hookPod('b')], specs });

    // Assess
    expect(plan.warnings).toEqual([]);
    expect(
      plan.pods.map((p) => [p.pod.name, p.pre.map((h) => h.command[0]), p.post.map((h) => h.command[0])]),
    ).toEqual([
      ['b', ['/freeze'], ['/thaw']],
      ['a', ['/freeze'], ['/thaw']],
    ]);
  });

  it('skips a pod that is not Running with a warning', () => {
    // Act
    const plan = planBlockHooks({
      items: [ref('pods', 'shop', 'a')],
      pods: [hookPod('a', { phase: 'Pending' })],
      specs,
    });

    // Assess
    expect(plan.pods).toEqual([]);
    expect(plan.warnings).toEqual(['pod shop/a is Pending, not Running: its hooks are not run']);
  });

  it('says nothing about a pod without hooks, whatever its phase', () => {
    // Act
    const plan = planBlockHooks({
      items: [ref('pods', 'shop', 'a')],
      pods: [hookPod('a', { phase: 'Pending', labels: {} })],
      specs: [
        { name: 'x', labelSelector: { matchLabels: { app: 'db' } }, pre: [{ exec: { command: ['y'] } }] },
      ],
    });

    // Assess
    expect(plan).toEqual({ pods: [], warnings: [] });
  });

  it('plans a pod read under two API versions once', () => {
    // Act
    const plan = planBlockHooks({
      items: [ref('pods', 'shop', 'a'), { ...ref('pods', 'shop', 'a'), version: 'v2' }],
      pods: [hookPod('a')],
      specs,
    });

    // Assess
    expect(plan.pods).toHaveLength(1);
  });
});

describe('runPodHooks', () => {
  it('runs every hook in order when they succeed', async () => {
    // Prepare
    const ran: string[] = [];
    const hooks = [hook({ command: ['one'] }), hook({ command: ['two'] })];

    // Act
    const outcome = await runPodHooks({
      pod: { namespace: 'shop', name: 'a' },
      hooks,
      exec: async (h) => {
        ran.push(h.command[0] ?? '');
        return ok(h.command[0]);
      },
    });

    // Assess
    expect(ran).toEqual(['one', 'two']);
    expect(outcome.failed).toBe(false);
    expect(outcome.runs.map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
  });

  it.each([
    ['a non-zero exit code', exit(3), 'exit code 3'],
    [
      'a timeout',
      { exitCode: undefined, stdout: '', stderr: '', timedOut: true, durationMs: 30_000 },
      'timed out after 30s',
    ],
    [
      'no exit code',
      {
        stdout: '',
        stderr: '',
        timedOut: false,
        durationMs: 1,
        error: 'exec: "x": executable file not found',
      },
      'exec: "x": executable file not found',
    ],
  ])('stops after %s of an onError Fail hook, leaving the rest not run', async (_title, result, failure) => {
    // Prepare
    const hooks = [hook({ onError: 'Fail' }), hook({ command: ['after'] })];
    let calls = 0;

    // Act
    const outcome = await runPodHooks({
      pod: { namespace: 'shop', name: 'a' },
      hooks,
      exec: async () => {
        calls++;
        return result as CommandResult;
      },
    });

    // Assess
    expect(calls).toBe(1);
    expect(outcome.failed).toBe(true);
    expect(outcome.runs.map((r) => r.status)).toEqual(['failed', 'notRun']);
    expect(outcome.runs[0]?.failure).toBe(failure);
  });

  it('goes on after a failed Continue hook', async () => {
    // Act
    const outcome = await runPodHooks({
      pod: { namespace: 'shop', name: 'a' },
      hooks: [hook({ onError: 'Continue' }), hook()],
      exec: async () => exit(1),
    });

    // Assess
    expect(outcome.failed).toBe(false);
    expect(outcome.runs.map((r) => r.status)).toEqual(['failed', 'failed']);
  });

  it('fails an invalid hook without running it, honouring its onError', async () => {
    // Prepare
    let calls = 0;

    // Act
    const outcome = await runPodHooks({
      pod: { namespace: 'shop', name: 'a' },
      hooks: [hook({ invalid: 'pod shop/a has no container "nope"', onError: 'Fail' }), hook()],
      exec: async () => {
        calls++;
        return ok();
      },
    });

    // Assess
    expect(calls).toBe(0);
    expect(outcome.failed).toBe(true);
    expect(outcome.runs[0]?.failure).toBe('pod shop/a has no container "nope"');
  });

  it('takes an error thrown by the runner as the hook failure', async () => {
    // Act
    const outcome = await runPodHooks({
      pod: { namespace: 'shop', name: 'a' },
      hooks: [hook({ onError: 'Fail' })],
      exec: async () => {
        throw new Error('container "nope" is not valid for pod "a"');
      },
    });

    // Assess
    expect(outcome.failed).toBe(true);
    expect(outcome.runs[0]?.failure).toBe('container "nope" is not valid for pod "a"');
  });

  it('lets an abort end the whole run', async () => {
    // Prepare
    const abort = new DOMException('aborted', 'AbortError');

    // Act
    const running = runPodHooks({
      pod: { namespace: 'shop', name: 'a' },
      hooks: [hook()],
      exec: async () => {
        throw abort;
      },
    });

    // Assess
    await expect(running).rejects.toBe(abort);
  });
});

describe('itemsAfterPreHooks', () => {
  const pod = (name: string, claims: string[]): ItemFacts => ({ ref: ref('pods', 'shop', name), claims });
  const pvc = (name: string, volumeName?: string): ItemFacts =>
    volumeName
      ? { ref: ref('persistentvolumeclaims', 'shop', name), volumeName }
      : { ref: ref('persistentvolumeclaims', 'shop', name) };
  const pv = (name: string): ItemFacts => ({ ref: ref('persistentvolumes', '', name) });
  const names = (refs: readonly ItemRef[]): string[] => refs.map((r) => `${r.resource}/${r.name}`);

  it('skips the failed pod, the PVC only it mounts and that PVC’s PV', () => {
    // Prepare
    const items = [
      pod('a', ['own', 'shared']),
      pvc('own', 'pv-own'),
      pv('pv-own'),
      pvc('shared', 'pv-shared'),
      pv('pv-shared'),
      pod('b', ['shared']),
    ];

    // Act
    const { backUp, skipped } = itemsAfterPreHooks({ items, failedPods: [{ namespace: 'shop', name: 'a' }] });

    // Assess
    expect(names(backUp)).toEqual(['persistentvolumeclaims/shared', 'persistentvolumes/pv-shared', 'pods/b']);
    expect(skipped.map((s) => [`${s.ref.resource}/${s.ref.name}`, s.reason])).toEqual([
      ['pods/a', 'a pre hook of pod shop/a failed with onError Fail'],
      ['persistentvolumeclaims/own', 'only pod shop/a mounts it, and its pre hook failed with onError Fail'],
      [
        'persistentvolumes/pv-own',
        'its PVC shop/own is skipped: only pod shop/a mounts it, and its pre hook failed with onError Fail',
      ],
    ]);
  });

  it('skips a shared PVC when every pod mounting it failed', () => {
    // Act
    const { backUp } = itemsAfterPreHooks({
      items: [pod('a', ['shared']), pod('b', ['shared']), pvc('shared')],
      failedPods: [
        { namespace: 'shop', name: 'a' },
        { namespace: 'shop', name: 'b' },
      ],
    });

    // Assess
    expect(backUp).toEqual([]);
  });

  it('backs up everything when no pre hook failed', () => {
    // Prepare
    const items = [pod('a', ['own']), pvc('own', 'pv'), pv('pv')];

    // Act
    const { backUp, skipped } = itemsAfterPreHooks({ items, failedPods: [] });

    // Assess
    expect(backUp).toEqual(items.map((i) => i.ref));
    expect(skipped).toEqual([]);
  });

  it('puts every item in exactly one list, and never skips a PVC a kept pod mounts', () => {
    const claimNames = ['c0', 'c1', 'c2', 'c3'];
    const arbitrary = fc.record({
      pods: fc.array(fc.record({ claims: fc.subarray(claimNames), failed: fc.boolean() }), { maxLength: 5 }),
      bound: fc.subarray(claimNames),
    });
    fc.assert(
      fc.property(arbitrary, ({ pods, bound }) => {
        const items: ItemFacts[] = [
          ...pods.map((p, i) => pod(`p${i}`, p.claims)),
          ...claimNames.map((c) => pvc(c, bound.includes(c) ? `pv-${c}` : undefined)),
          ...bound.map((c) => pv(`pv-${c}`)),
        ];
        const failedPods = pods.flatMap((p, i) => (p.failed ? [{ namespace: 'shop', name: `p${i}` }] : []));
        const { backUp, skipped } = itemsAfterPreHooks({ items, failedPods });
        expect(backUp.length + skipped.length).toBe(items.length);
        const skippedNames = new Set(skipped.map((s) => `${s.ref.resource}/${s.ref.name}`));
        pods.forEach((p, i) => {
          expect(skippedNames.has(`pods/p${i}`)).toBe(p.failed);
          if (!p.failed)
            for (const c of p.claims) expect(skippedNames.has(`persistentvolumeclaims/${c}`)).toBe(false);
        });
        // A PVC no pod mounts is never skipped.
        for (const c of claimNames) {
          if (!pods.some((p) => p.claims.includes(c)))
            expect(skippedNames.has(`persistentvolumeclaims/${c}`)).toBe(false);
        }
      }),
    );
  });
});

describe('postHookPods and hookStatusOf', () => {
  it('runs post hooks only on pods whose pre hooks did not fail', () => {
    // Prepare
    const specs: BackupHookSpec[] = [{ name: 'h', post: [{ exec: { command: ['/thaw'] } }] }];
    const plan = planBlockHooks({
      items: [ref('pods', 'shop', 'a'), ref('pods', 'shop', 'b')],
      pods: [hookPod('a'), hookPod('b')],
      specs,
    });

    // Act
    const pods = postHookPods({ plan, failedPods: [{ namespace: 'shop', name: 'a' }] });

    // Assess
    expect(pods.map((p) => p.pod.name)).toEqual(['b']);
  });

  it('counts collected hooks as attempted and failed ones as failed, as Velero’s hook tracker', async () => {
    // Prepare
    const outcome = await runPodHooks({
      pod: { namespace: 'shop', name: 'a' },
      hooks: [hook(), hook({ onError: 'Fail' }), hook()],
      exec: async () => exit(2),
    });

    // Act
    const status = hookStatusOf(outcome.runs);

    // Assess
    expect(status).toEqual({ hooksAttempted: 3, hooksFailed: 2 });
  });
});

describe('hookRunEvents', () => {
  it('logs the run, its stdout and stderr, and an error line for a failure', async () => {
    // Prepare
    const outcome = await runPodHooks({
      pod: { namespace: 'shop', name: 'a' },
      hooks: [hook({ command: ['/bin/sh', '-c', 'exit 3'] })],
      exec: async () => ({ exitCode: 3, stdout: 'out', stderr: 'err', timedOut: false, durationMs: 2 }),
    });
    const run = outcome.runs[0];
    if (!run) throw new Error('no run');

    // Act
    const events = hookRunEvents(run, '2025-01-01T00:00:00Z');

    // Assess
    expect(events.map((e) => [e.level, e.msg])).toEqual([
      ['info', 'running exec hook'],
      ['info', 'stdout: out'],
      ['info', 'stderr: err'],
      ['error', 'Error executing hook'],
    ]);
    expect(events[3]?.fields).toMatchObject({
      hookName: 'h',
      hookPhase: 'pre',
      hookContainer: 'main',
      hookCommand: '["/bin/sh","-c","exit 3"]',
      hookOnError: 'Continue',
      hookTimeout: '30s',
      error: 'exit code 3',
    });
  });
});
