import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CommandResult } from '../../../../../shared/domain/hooks/plan.js';
import type { ContainerHooks, PodRestoreExecHook } from '../../../../../shared/domain/hooks/restore.js';
import {
  containerUpSinceMs,
  executionFailure,
  type HookSlot,
  hookDescription,
  type NextHookAction,
  nextHookAction,
  podCreatedMs,
  slotKey,
} from '../../../../../shared/domain/hooks/restore-progress.js';

const T0 = Date.parse('2025-05-01T10:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString();

const hook = (over: Partial<PodRestoreExecHook> = {}): PodRestoreExecHook => ({
  hookName: 'h',
  source: 'spec',
  phase: 'post',
  container: 'app',
  command: ['true'],
  onError: 'Continue',
  timeoutMs: 30_000,
  waitForReady: false,
  ...over,
});

const group = (container: string, hooks: PodRestoreExecHook[]): ContainerHooks => ({
  container,
  hooks: hooks.map((h) => ({ ...h, container })),
});

/** A pod created at T0 whose named containers started at the given times (ready or not). */
const pod = (
  options: {
    phase?: string;
    running?: Record<string, { startedMs: number; ready?: boolean }>;
    containersReadySinceMs?: number;
  } = {},
): Record<string, unknown> => ({
  metadata: { namespace: 'shop', name: 'db-0', creationTimestamp: iso(T0) },
  status: {
    phase: options.phase ?? 'Running',
    conditions:
      options.containersReadySinceMs === undefined
        ? []
        : [
            {
              type: 'ContainersReady',
              status: 'True',
              lastTransitionTime: iso(options.containersReadySinceMs),
            },
          ],
    containerStatuses: Object.entries(options.running ?? {}).map(([name, c]) => ({
      name,
      ready: c.ready ?? true,
      state: { running: { startedAt: iso(c.startedMs) } },
    })),
  },
});

const decide = (options: {
  byContainer: ContainerHooks[];
  pod: unknown;
  nowMs: number;
  settled?: string[];
  stopped?: boolean;
  restoreWaitLimitMs?: number;
}): NextHookAction =>
  nextHookAction({
    namespace: 'shop',
    name: 'db-0',
    byContainer: options.byContainer,
    settled: new Set(options.settled ?? []),
    stopped: options.stopped ?? false,
    pod: options.pod,
    nowMs: options.nowMs,
    waitStartMs: T0,
    restoreWaitLimitMs: options.restoreWaitLimitMs ?? 3_600_000,
  });

const settledKinds = (action: NextHookAction): string[] =>
  action.kind === 'settle' ? action.settlements.map((s) => `${slotKey(s.slot)}:${s.failure.kind}`) : [];

describe('the next step of a restored pod’s exec hooks', () => {
  it('runs the first hook of a running container', () => {
    // Prepare
    const byContainer = [group('app', [hook({ hookName: 'a' }), hook({ hookName: 'b' })])];

    // Act
    const action = decide({
      byContainer,
      pod: pod({ running: { app: { startedMs: T0 + 2_000 } } }),
      nowMs: T0 + 5_000,
    });

    // Assess
    expect(action).toMatchObject({
      kind: 'run',
      slot: { container: 'app', index: 0, hook: { hookName: 'a' } },
    });
  });

  it('runs the next unsettled hook once the first is settled, and is done when all are', () => {
    // Prepare
    const byContainer = [group('app', [hook({ hookName: 'a' }), hook({ hookName: 'b' })])];
    const up = pod({ running: { app: { startedMs: T0 } } });

    // Act
    const second = decide({ byContainer, pod: up, nowMs: T0, settled: ['app/0'] });
    const last = decide({ byContainer, pod: up, nowMs: T0, settled: ['app/0', 'app/1'] });

    // Assess
    expect(second).toMatchObject({ kind: 'run', slot: { index: 1, hook: { hookName: 'b' } } });
    expect(last).toEqual({ kind: 'done' });
  });

  it.each([
    {
      title: 'waits for a container that is not running yet, within its wait timeout',
      hooks: [hook({ waitTimeoutMs: 10_000 })],
      state: pod({ phase: 'Pending' }),
      nowMs: T0 + 9_000,
      expected: { kind: 'wait' },
      settled: [],
    },
    {
      title: 'fails a hook as expired when its container is not running within its wait timeout',
      hooks: [hook({ waitTimeoutMs: 10_000 })],
      state: pod({ phase: 'Pending' }),
      nowMs: T0 + 11_000,
      expected: { kind: 'settle' },
      settled: ['app/0:expired'],
    },
    {
      title:
        'fails an onError Fail hook as expired, unrun, when its container started only after the wait timeout, however late it is looked at',
      hooks: [hook({ waitTimeoutMs: 10_000, onError: 'Fail' })],
      state: pod({ running: { app: { startedMs: T0 + 12_000 } } }),
      nowMs: T0 + 60_000,
      expected: { kind: 'settle' },
      settled: ['app/0:expired'],
    },
    {
      title:
        'runs an onError Continue hook whose container started only after the wait timeout, failed as expired (Velero)',
      hooks: [hook({ waitTimeoutMs: 10_000 })],
      state: pod({ running: { app: { startedMs: T0 + 12_000 } } }),
      nowMs: T0 + 60_000,
      expected: {
        kind: 'run',
        slot: { index: 0 },
        expired: {
          kind: 'expired',
          message:
            'hook h in container app in pod shop/db-0 expired before executing: its container became running only after its wait timeout (10s)',
        },
      },
      settled: [],
    },
    {
      title: 'runs a hook whose container started within the wait timeout, however late it is looked at',
      hooks: [hook({ waitTimeoutMs: 10_000 })],
      state: pod({ running: { app: { startedMs: T0 + 8_000 } } }),
      nowMs: T0 + 600_000,
      expected: { kind: 'run' },
      settled: [],
    },
    {
      title: 'waits for readiness when a hook asks waitForReady',
      hooks: [hook({ waitForReady: true })],
      state: pod({ running: { app: { startedMs: T0, ready: false } } }),
      nowMs: T0 + 5_000,
      expected: { kind: 'wait' },
      settled: [],
    },
    {
      title: 'judges a waitForReady hook by when the containers became ready',
      hooks: [hook({ waitForReady: true, waitTimeoutMs: 10_000, onError: 'Fail' })],
      state: pod({ running: { app: { startedMs: T0 + 1_000 } }, containersReadySinceMs: T0 + 20_000 }),
      nowMs: T0 + 30_000,
      expected: { kind: 'settle' },
      settled: ['app/0:expired'],
    },
    {
      title: 'fails every hook as not executed when the pod was deleted',
      hooks: [hook(), hook()],
      state: undefined,
      nowMs: T0,
      expected: { kind: 'settle' },
      settled: ['app/0:notExecuted', 'app/1:notExecuted'],
    },
    {
      title: 'fails every hook as not executed when the pod completed before they ran',
      hooks: [hook()],
      state: pod({ phase: 'Succeeded' }),
      nowMs: T0,
      expected: { kind: 'settle' },
      settled: ['app/0:notExecuted'],
    },
    {
      title: 'keeps a hook without wait timeout waiting up to the restore’s limit, then fails it',
      hooks: [hook()],
      state: pod({ phase: 'Pending' }),
      nowMs: T0 + 3_600_001,
      expected: { kind: 'settle' },
      settled: ['app/0:notExecuted'],
    },
  ])('$title', ({ hooks, state, nowMs, expected, settled }) => {
    // Act
    const action = decide({ byContainer: [group('app', hooks)], pod: state, nowMs });

    // Assess
    expect(action).toMatchObject(expected);
    expect(settledKinds(action)).toEqual(settled);
  });

  it('fails the remaining hooks of every container once a hook failed with onError Fail', () => {
    // Prepare
    const byContainer = [group('app', [hook(), hook()]), group('side', [hook()])];

    // Act
    const action = decide({
      byContainer,
      pod: pod({ running: { app: { startedMs: T0 }, side: { startedMs: T0 } } }),
      nowMs: T0,
      settled: ['app/0'],
      stopped: true,
    });

    // Assess
    expect(settledKinds(action)).toEqual(['app/1:notExecuted', 'side/0:notExecuted']);
    expect(action.kind === 'settle' && action.settlements[0]?.failure.message).toBe(
      'hook h in container app in pod shop/db-0 not executed: an earlier hook of the pod failed with onError Fail',
    );
  });

  it('runs the hooks of a running container while another container still waits', () => {
    // Prepare
    const byContainer = [group('slow', [hook({ waitTimeoutMs: 60_000 })]), group('fast', [hook()])];

    // Act
    const action = decide({
      byContainer,
      pod: pod({ running: { fast: { startedMs: T0 } } }),
      nowMs: T0 + 1_000,
    });

    // Assess
    expect(action).toMatchObject({ kind: 'run', slot: { container: 'fast', index: 0 } });
  });

  it('runs an expired onError Continue hook whose container comes up while the pod is still watched', () => {
    // Prepare: the pod is watched as long as its longest wait timeout (Velero's maxHookWait).
    const byContainer = [group('app', [hook({ waitTimeoutMs: 5_000 }), hook({ waitTimeoutMs: 60_000 })])];

    // Act
    const pending = decide({ byContainer, pod: pod({ phase: 'Pending' }), nowMs: T0 + 10_000 });
    const late = decide({
      byContainer,
      pod: pod({ running: { app: { startedMs: T0 + 20_000 } } }),
      nowMs: T0 + 25_000,
    });
    const never = decide({ byContainer, pod: pod({ phase: 'Pending' }), nowMs: T0 + 61_000 });

    // Assess
    expect(pending).toEqual({ kind: 'wait' });
    expect(late).toMatchObject({ kind: 'run', slot: { index: 0 }, expired: { kind: 'expired' } });
    expect(settledKinds(never)).toEqual(['app/0:expired']);
  });

  it('settles only the first expired hook of a container, so a later hook is judged in its turn', () => {
    // Prepare
    const byContainer = [
      group('app', [hook({ waitTimeoutMs: 5_000, onError: 'Fail' }), hook({ waitTimeoutMs: 60_000 })]),
    ];

    // Act
    const action = decide({ byContainer, pod: pod({ phase: 'Pending' }), nowMs: T0 + 10_000 });

    // Assess
    expect(settledKinds(action)).toEqual(['app/0:expired']);
  });

  it('never hands back a settled hook and always ends within one step per hook', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            container: fc.constantFrom('a', 'b', 'c'),
            waitTimeoutMs: fc.option(fc.integer({ min: 1, max: 100_000 }), { nil: undefined }),
            waitForReady: fc.boolean(),
            onError: fc.constantFrom('Continue' as const, 'Fail' as const),
            fails: fc.boolean(),
          }),
          { minLength: 1, maxLength: 8 },
        ),
        fc.dictionary(
          fc.constantFrom('a', 'b', 'c'),
          fc.record({ startedMs: fc.integer({ min: 0, max: 200_000 }), ready: fc.boolean() }),
        ),
        fc.integer({ min: 0, max: 300_000 }),
        fc.constantFrom('Running', 'Pending', 'Failed'),
        (specs, running, now, phase) => {
          // Prepare
          const byName = new Map<string, PodRestoreExecHook[]>();
          for (const s of specs)
            byName.set(s.container, [
              ...(byName.get(s.container) ?? []),
              hook({
                container: s.container,
                onError: s.onError,
                waitForReady: s.waitForReady,
                ...(s.waitTimeoutMs ? { waitTimeoutMs: s.waitTimeoutMs } : {}),
                command: [s.fails ? 'false' : 'true'],
              }),
            ]);
          const byContainer = [...byName].map(([c, hs]) => group(c, hs));
          const state = pod({
            phase,
            running: Object.fromEntries(
              Object.entries(running).map(([c, r]) => [c, { startedMs: T0 + r.startedMs, ready: r.ready }]),
            ),
          });
          const settled = new Set<string>();
          let stopped = false;

          // Act
          let steps = 0;
          for (;;) {
            const action = nextHookAction({
              namespace: 'shop',
              name: 'db-0',
              byContainer,
              settled,
              stopped,
              pod: state,
              nowMs: T0 + now,
              waitStartMs: T0,
              restoreWaitLimitMs: 250_000,
            });
            steps++;
            if (action.kind === 'done' || action.kind === 'wait') break;
            const slots: HookSlot[] =
              action.kind === 'run' ? [action.slot] : action.settlements.map((s) => s.slot);

            // Assess
            for (const slot of slots) {
              expect(settled.has(slotKey(slot))).toBe(false);
              settled.add(slotKey(slot));
            }
            if (
              action.kind === 'run' &&
              action.slot.hook.command[0] === 'false' &&
              action.slot.hook.onError === 'Fail'
            )
              stopped = true;
            expect(steps).toBeLessThanOrEqual(specs.length + 1);
          }
          if (stopped || phase === 'Failed') expect(settled.size).toBe(specs.length);
        },
      ),
    );
  });
});

describe('reading the pod’s times', () => {
  it('takes the creation time, the container start and, for waitForReady, the later readiness', () => {
    // Prepare
    const state = pod({ running: { app: { startedMs: T0 + 3_000 } }, containersReadySinceMs: T0 + 7_000 });

    // Act & Assess
    expect(podCreatedMs(state)).toBe(T0);
    expect(containerUpSinceMs({ pod: state, container: group('app', [hook()]) })).toBe(T0 + 3_000);
    expect(containerUpSinceMs({ pod: state, container: group('app', [hook({ waitForReady: true })]) })).toBe(
      T0 + 7_000,
    );
    expect(containerUpSinceMs({ pod: state, container: group('other', [hook()]) })).toBeUndefined();
    expect(podCreatedMs({})).toBeUndefined();
  });
});

describe('why a hook that ran failed', () => {
  const slot: HookSlot = { container: 'app', index: 0, hook: hook() };
  const result = (over: Partial<CommandResult>): CommandResult => ({
    stdout: '',
    stderr: '',
    timedOut: false,
    durationMs: 5,
    ...over,
  });

  it.each([
    { title: 'exit code 0 is success', over: { exitCode: 0 }, expected: undefined },
    {
      title: 'another exit code fails',
      over: { exitCode: 3 },
      expected: 'command terminated with exit code 3',
    },
    { title: 'a timeout fails', over: { timedOut: true }, expected: 'timed out after 30s' },
    { title: 'no exit code gives the reason', over: { error: 'stream closed' }, expected: 'stream closed' },
  ])('$title', ({ over, expected }) => {
    expect(executionFailure({ result: result(over), slot, timeoutMs: 30_000 })).toBe(expected);
  });

  it('names an annotation hook as Velero does', () => {
    expect(
      hookDescription({
        slot: { ...slot, hook: hook({ hookName: '<from-annotation>' }) },
        namespace: 'shop',
        pod: 'db-0',
      }),
    ).toBe('hook from annotation in container app in pod shop/db-0');
  });
});
