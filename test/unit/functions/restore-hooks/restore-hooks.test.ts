/**
 * RestoreHooks against fakes of our own ports (a cluster whose pods change as the test says, a
 * scripted PodExec, a settable clock) and the directory store: which hooks run, what is saved
 * between invocations, and how an invocation hands back when it runs out of time. The real
 * apiserver and exec are exercised by test/integration/restore/restore-hooks.test.ts.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { beforeEach, describe, expect, it } from 'vitest';
import { hookReport } from '../../../../functions/finalize-restore/hook-results.js';
import { recordPodHooks } from '../../../../functions/restore-hooks/pod-hook-records.js';
import { restoreHooks } from '../../../../functions/restore-hooks/restore-hooks.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import {
  type ContainerHooks,
  type PlannedItem,
  podHooksOutcome,
  type RestoreRun,
} from '../../../../shared/contracts/restore-run.js';
import { RetryableError } from '../../../../shared/domain/errors.js';
import { restoreWorkKeys } from '../../../../shared/domain/storage/keys.js';
import type { ClusterWriter } from '../../../../shared/ports/cluster.js';
import type { PodExec, PodExecRequest, PodExecResult } from '../../../../shared/ports/pod-exec.js';

const T0 = Date.parse('2025-05-01T10:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString();
const run: RestoreRun = {
  name: 'r1',
  backupName: 'b1',
  cluster: 'c',
  runId: 'x',
  startedAt: iso(T0),
  dryRun: false,
};

/** Pods by `<namespace>/<name>`; a test changes them between invocations. */
class PodCluster implements ClusterWriter {
  readonly pods = new Map<string, Record<string, unknown>>();
  async read(options: { object: Record<string, unknown> }) {
    const meta = options.object.metadata as { namespace: string; name: string };
    return this.pods.get(`${meta.namespace}/${meta.name}`);
  }
  async create(): Promise<never> {
    throw new Error('RestoreHooks never creates');
  }
  async mergePatch(): Promise<never> {
    throw new Error('RestoreHooks never patches');
  }
  async delete(): Promise<never> {
    throw new Error('RestoreHooks never deletes');
  }
  async replaceStatus(): Promise<never> {
    throw new Error('RestoreHooks never writes status');
  }
  async waitForCrd(): Promise<never> {
    throw new Error('RestoreHooks never waits for CRDs');
  }
}

/** Runs `sh -c <script>` as the script says: `exit N`, `sleep MS`, `retry` (the apiserver is busy once). */
class ScriptedExec implements PodExec {
  readonly calls: PodExecRequest[] = [];
  busyOnce = new Set<string>();
  async exec(request: PodExecRequest): Promise<PodExecResult> {
    this.calls.push(request);
    const script = request.command.at(-1) ?? '';
    if (this.busyOnce.delete(script)) throw new RetryableError('the apiserver answered 503');
    const sleep = /sleep (\d+)/.exec(script);
    if (sleep) await new Promise((r) => setTimeout(r, Number(sleep[1])));
    const exit = /exit (\d+)/.exec(script);
    return {
      exitCode: exit ? Number(exit[1]) : 0,
      stdout: `out of ${script}\n`,
      stderr: '',
      timedOut: false,
      durationMs: 1,
      stdoutDroppedBytes: 0,
      stderrDroppedBytes: 0,
    };
  }
}

const runningPod = (name: string, containers: string[], startedMs = T0 + 1_000) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { namespace: 'shop', name, creationTimestamp: iso(T0) },
  status: {
    phase: 'Running',
    containerStatuses: containers.map((c) => ({
      name: c,
      ready: true,
      state: { running: { startedAt: iso(startedMs) } },
    })),
  },
});
const pendingPod = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { namespace: 'shop', name, creationTimestamp: iso(T0) },
  status: { phase: 'Pending' },
});

const hooksOf = (
  container: string,
  scripts: { script: string; over?: Record<string, unknown> }[],
): ContainerHooks => ({
  container,
  hooks: scripts.map(({ script, over }) => ({
    hookName: 'h',
    source: 'spec' as const,
    phase: 'post' as const,
    container,
    command: ['sh', '-c', script],
    onError: 'Continue' as const,
    timeoutMs: 30_000,
    waitForReady: false,
    ...over,
  })),
});

describe('RestoreHooks', () => {
  let store: LocalDirectoryStore;
  let cluster: PodCluster;
  let exec: ScriptedExec;
  let now: number;
  const clock = { now: () => new Date(now) };
  const deps = (over: Record<string, unknown> = {}) => ({
    store,
    cluster,
    podExec: exec,
    clock,
    pollMs: 0,
    ...over,
  });

  /** Plans a created pod with these hooks, as RestorePhase records it. */
  async function createdPod(name: string, execHooks: ContainerHooks[], hookWarnings: string[] = []) {
    const item: PlannedItem = {
      groupResource: 'pods',
      sourceNamespace: 'shop',
      object: {},
      execHooks,
      ...(hookWarnings.length ? { hookWarnings } : {}),
    };
    await recordPodHooks({
      store,
      run,
      items: [item],
      outcomes: [{ apiVersion: 'v1', kind: 'Pod', namespace: 'shop', name, result: 'created' }],
    });
  }

  beforeEach(async () => {
    store = new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'lifeboat-hooks-')));
    cluster = new PodCluster();
    exec = new ScriptedExec();
    now = T0 + 5_000;
    await store.put(
      restoreWorkKeys(run).request,
      JSON.stringify({ cluster: 'c', restore: { metadata: { name: 'r1' }, spec: { backupName: 'b1' } } }),
    );
  });

  it('has nothing to do when no created pod has hooks', async () => {
    // Prepare: an updated pod's hooks never run (Velero runs them for pods it created).
    await recordPodHooks({
      store,
      run,
      items: [
        {
          groupResource: 'pods',
          sourceNamespace: 'shop',
          object: {},
          execHooks: [hooksOf('app', [{ script: 'x' }])],
        },
      ],
      outcomes: [{ apiVersion: 'v1', kind: 'Pod', namespace: 'shop', name: 'p', result: 'updated' }],
    });

    // Act
    const progress = await restoreHooks({ run }, deps());

    // Assess
    expect(progress).toEqual({ pending: 0, waitSeconds: 0, settled: 0 });
    expect(exec.calls).toEqual([]);
  });

  it('runs the hooks of running containers in order and reports their output, failures and counts', async () => {
    // Prepare
    await createdPod(
      'db-0',
      [
        hooksOf('app', [{ script: 'echo one' }, { script: 'exit 3' }]),
        hooksOf('side', [{ script: 'echo side' }]),
      ],
      [
        'pod shop/db-0: annotation post.hook.restore.velero.io/on-error="Maybe" is neither Continue nor Fail; it is ignored',
      ],
    );
    cluster.pods.set('shop/db-0', runningPod('db-0', ['app', 'side']));

    // Act
    const progress = await restoreHooks({ run }, deps());
    const report = await hookReport({ store, run, time: iso(now) });

    // Assess
    expect(progress).toEqual({ pending: 0, waitSeconds: 0, settled: 1 });
    expect(exec.calls.map((c) => `${c.container}:${c.command.at(-1)}`)).toEqual([
      'app:echo one',
      'app:exit 3',
      'side:echo side',
    ]);
    expect(report.hookStatus).toEqual({ hooksAttempted: 3, hooksFailed: 1 });
    expect(report.results.errors).toEqual({
      namespaces: {
        shop: ['hook h in container app in pod shop/db-0 failed: command terminated with exit code 3'],
      },
    });
    const messages = report.log.map((e) => `${e.level} ${e.msg}`);
    expect(messages).toContain('info stdout: out of echo one\n');
    expect(messages).toContain('error Error executing hook');
    expect(messages[0]).toMatch(/^warning pod shop\/db-0: annotation/);
  });

  it('stops a pod’s remaining hooks after a failure with onError Fail', async () => {
    // Prepare
    await createdPod('db-0', [
      hooksOf('app', [{ script: 'exit 1', over: { onError: 'Fail' } }, { script: 'echo never' }]),
      hooksOf('side', [{ script: 'echo never either' }]),
    ]);
    cluster.pods.set('shop/db-0', runningPod('db-0', ['app', 'side']));

    // Act
    await restoreHooks({ run }, deps());
    const report = await hookReport({ store, run, time: iso(now) });

    // Assess
    expect(exec.calls).toHaveLength(1);
    expect(report.hookStatus).toEqual({ hooksAttempted: 3, hooksFailed: 3 });
    expect(report.results.errors.namespaces?.shop?.slice(1)).toEqual([
      'hook h in container app in pod shop/db-0 not executed: an earlier hook of the pod failed with onError Fail',
      'hook h in container side in pod shop/db-0 not executed: an earlier hook of the pod failed with onError Fail',
    ]);
  });

  it('hands back while a container is not up, then runs its hook once it is, or reports its wait timeout', async () => {
    // Prepare
    await createdPod('late', [hooksOf('app', [{ script: 'echo late', over: { waitTimeoutMs: 60_000 } }])]);
    await createdPod('never', [hooksOf('app', [{ script: 'echo never', over: { waitTimeoutMs: 20_000 } }])]);
    cluster.pods.set('shop/late', pendingPod('late'));
    cluster.pods.set('shop/never', pendingPod('never'));

    // Act
    const first = await restoreHooks({ run }, deps({ waitSeconds: 7 }));
    now = T0 + 30_000;
    cluster.pods.set('shop/late', runningPod('late', ['app'], T0 + 25_000));
    const second = await restoreHooks({ run }, deps());
    const report = await hookReport({ store, run, time: iso(now) });

    // Assess
    expect(first).toEqual({ pending: 2, waitSeconds: 7, settled: 0 });
    expect(second).toEqual({ pending: 0, waitSeconds: 0, settled: 2 });
    expect(exec.calls.map((c) => c.pod)).toEqual(['late']);
    expect(report.results.errors).toEqual({
      namespaces: {
        shop: [
          'hook h in container app in pod shop/never expired before executing: its container was not running within its wait timeout (20s)',
        ],
      },
    });
  });

  it('runs an onError Continue hook whose container came up after its wait timeout, failed as expired (Velero)', async () => {
    // Prepare: the second hook's longer wait keeps the pod watched after the first one's ran out.
    await createdPod('slow', [
      hooksOf('app', [
        { script: 'echo expired', over: { waitTimeoutMs: 10_000 } },
        { script: 'echo in-time', over: { waitTimeoutMs: 60_000 } },
      ]),
    ]);
    cluster.pods.set('shop/slow', pendingPod('slow'));

    // Act
    now = T0 + 15_000;
    const first = await restoreHooks({ run }, deps());
    now = T0 + 30_000;
    cluster.pods.set('shop/slow', runningPod('slow', ['app'], T0 + 20_000));
    const second = await restoreHooks({ run }, deps());
    const report = await hookReport({ store, run, time: iso(now) });

    // Assess: Velero records the expiry as the hook's failure, then executes it all the same.
    expect(first).toMatchObject({ pending: 1 });
    expect(second).toEqual({ pending: 0, waitSeconds: 0, settled: 1 });
    expect(exec.calls.map((c) => c.command.at(-1))).toEqual(['echo expired', 'echo in-time']);
    expect(report.hookStatus).toEqual({ hooksAttempted: 2, hooksFailed: 1 });
    expect(report.results.errors).toEqual({
      namespaces: {
        shop: [
          'hook h in container app in pod shop/slow expired before executing: its container became running only after its wait timeout (10s)',
        ],
      },
    });
    const messages = report.log.map((e) => `${e.level} ${e.msg}`);
    const expiry = messages.findIndex((m) =>
      m.startsWith('error hook h in container app in pod shop/slow expired'),
    );
    expect(expiry).toBeGreaterThan(-1);
    expect(messages.indexOf('info stdout: out of echo expired\n')).toBeGreaterThan(expiry);
  });

  it('leaves an onError Fail hook whose container came up after its wait timeout unrun, and stops the pod', async () => {
    // Prepare
    await createdPod('strict', [
      hooksOf('app', [
        { script: 'echo expired', over: { waitTimeoutMs: 10_000, onError: 'Fail' } },
        { script: 'echo next', over: { waitTimeoutMs: 60_000 } },
      ]),
    ]);
    cluster.pods.set('shop/strict', runningPod('strict', ['app'], T0 + 20_000));

    // Act
    now = T0 + 30_000;
    await restoreHooks({ run }, deps());
    const report = await hookReport({ store, run, time: iso(now) });

    // Assess
    expect(exec.calls).toEqual([]);
    expect(report.hookStatus).toEqual({ hooksAttempted: 2, hooksFailed: 2 });
  });

  it('starts no hook that could outlast the invocation, and the next invocation resumes after the last one run', async () => {
    // Prepare
    await createdPod('db-0', [
      hooksOf('app', [
        { script: 'sleep 200', over: { timeoutMs: 500 } },
        { script: 'echo second', over: { timeoutMs: 5_000 } },
      ]),
    ]);
    cluster.pods.set('shop/db-0', runningPod('db-0', ['app']));

    // Act
    const first = await restoreHooks({ run }, deps({ maxRunMs: 1_000 }));
    const saved = podHooksOutcome.parse(
      JSON.parse(
        gunzipSync(
          (await store.get(restoreWorkKeys(run).podHooksProgress('shop', 'db-0'))) ?? new Uint8Array(),
        ).toString(),
      ),
    );
    const second = await restoreHooks({ run }, deps({ maxRunMs: 1_000 }));
    const report = await hookReport({ store, run, time: iso(now) });

    // Assess
    expect(first).toEqual({ pending: 1, waitSeconds: 0, settled: 0 });
    expect(saved.runs.map((r) => `${r.index}:${r.status}`)).toEqual(['0:succeeded']);
    expect(second).toEqual({ pending: 0, waitSeconds: 0, settled: 1 });
    expect(exec.calls.map((c) => c.command.at(-1))).toEqual(['sleep 200', 'echo second']);
    // The second hook's 5s exec timeout is cut to what one invocation allows, and the log says so.
    expect(exec.calls[1]?.timeoutMs).toBe(900);
    expect(report.log.some((e) => e.level === 'warning' && e.msg.includes('runs with'))).toBe(true);
    expect(report.hookStatus).toEqual({ hooksAttempted: 2, hooksFailed: 0 });
  });

  it('ends the step on a retryable apiserver error and, retried, runs only what had not run', async () => {
    // Prepare
    await createdPod('db-0', [hooksOf('app', [{ script: 'echo first' }, { script: 'echo second' }])]);
    cluster.pods.set('shop/db-0', runningPod('db-0', ['app']));
    exec.busyOnce.add('echo second');

    // Act
    const failed = restoreHooks({ run }, deps());
    await expect(failed).rejects.toThrow(RetryableError);
    const retried = await restoreHooks({ run }, deps());

    // Assess
    expect(retried).toEqual({ pending: 0, waitSeconds: 0, settled: 1 });
    expect(exec.calls.map((c) => c.command.at(-1))).toEqual(['echo first', 'echo second', 'echo second']);
    expect((await hookReport({ store, run, time: iso(now) })).hookStatus).toEqual({
      hooksAttempted: 2,
      hooksFailed: 0,
    });
  });

  it('fails the hooks of a pod deleted before they ran', async () => {
    // Prepare
    await createdPod('gone', [hooksOf('app', [{ script: 'echo x' }])]);

    // Act
    await restoreHooks({ run }, deps());
    const report = await hookReport({ store, run, time: iso(now) });

    // Assess
    expect(exec.calls).toEqual([]);
    expect(report.results.errors.namespaces?.shop).toEqual([
      'hook h in container app in pod shop/gone not executed: the pod was deleted before its hooks ran',
    ]);
  });
});
