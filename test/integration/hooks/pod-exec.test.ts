/**
 * The pod exec adapter against the local apiserver: KWOK's node serves `exec` by running the
 * command on this machine (test/env), so exit codes, output and timing are real.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubernetesPodExec, PodExecRefused } from '../../../shared/adapters/kubernetes-pod-exec.js';
import { hookPodOf } from '../../../shared/domain/hooks/backup.js';
import { planBlockHooks, runPodHooks } from '../../../shared/domain/hooks/plan.js';
import { kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';

describe('running a command in a pod through the exec subresource', () => {
  const kc = () => kubeConfigFor(testEnv().clusters.source);
  const namespace = uniqueName('hook-exec');
  const pod = 'shell';

  beforeAll(async () => {
    const core = kc().makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await waitFor('the default service account', async () =>
      (await core.listNamespacedServiceAccount({ namespace })).items.some(
        (s) => s.metadata?.name === 'default',
      ),
    );
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: {
          name: pod,
          labels: { app: 'db' },
          annotations: {
            'pre.hook.backup.velero.io/command': '["/bin/sh","-c","echo frozen; exit 4"]',
            'pre.hook.backup.velero.io/on-error': 'Fail',
          },
        },
        spec: {
          containers: [
            { name: 'main', image: 'busybox:1.36', command: ['sleep', 'infinity'] },
            { name: 'side', image: 'busybox:1.36', command: ['sleep', 'infinity'] },
          ],
        },
      },
    });
    await waitFor(
      'the pod to run',
      async () => (await core.readNamespacedPod({ namespace, name: pod })).status?.phase === 'Running',
    );
  });

  afterAll(async () => {
    await kc().makeApiClient(CoreV1Api).deleteNamespace({ name: namespace });
  });

  it('reports exit code 0 with stdout and stderr, over the v5 protocol', async () => {
    // Act
    const result = await new KubernetesPodExec(kc()).exec({
      namespace,
      pod,
      container: 'main',
      command: ['sh', '-c', 'echo hello; echo oops >&2'],
      timeoutMs: 20_000,
    });

    // Assess
    expect(result).toMatchObject({
      exitCode: 0,
      stdout: 'hello\n',
      stderr: 'oops\n',
      timedOut: false,
      stdoutDroppedBytes: 0,
      stderrDroppedBytes: 0,
      protocol: 'v5.channel.k8s.io',
    });
    expect(result.error).toBeUndefined();
  });

  it('waits for a command whose timeout is longer than a timer holds (30 days), rather than none', async () => {
    // Act: 720h is a valid hook timeout; Node's timers hold at most 2^31 - 1 ms (24.8 days).
    const result = await new KubernetesPodExec(kc()).exec({
      namespace,
      pod,
      container: 'main',
      command: ['sh', '-c', 'sleep 0.2; echo done'],
      timeoutMs: 720 * 3_600_000,
    });

    // Assess
    expect(result).toMatchObject({ exitCode: 0, stdout: 'done\n', timedOut: false });
  });

  it('reports a non-zero exit code exactly', async () => {
    // Act
    const result = await new KubernetesPodExec(kc()).exec({
      namespace,
      pod,
      container: 'side',
      command: ['sh', '-c', 'echo partial; exit 42'],
      timeoutMs: 20_000,
    });

    // Assess
    expect(result).toMatchObject({ exitCode: 42, stdout: 'partial\n', timedOut: false });
  });

  it('falls back to the v4 protocol, still with the exit code from the status channel', async () => {
    // Act
    const result = await new KubernetesPodExec(kc(), { protocols: ['v4.channel.k8s.io'] }).exec({
      namespace,
      pod,
      container: 'main',
      command: ['sh', '-c', 'echo four; exit 7'],
      timeoutMs: 20_000,
    });

    // Assess
    expect(result).toMatchObject({ exitCode: 7, stdout: 'four\n', protocol: 'v4.channel.k8s.io' });
  });

  it('reports a command that outlives its timeout as timed out, without an exit code', async () => {
    // Act
    const result = await new KubernetesPodExec(kc()).exec({
      namespace,
      pod,
      container: 'main',
      command: ['sleep', '5'],
      timeoutMs: 1_000,
    });

    // Assess
    expect(result.timedOut).toBe(true);
    expect(result.exitCode).toBeUndefined();
    expect(result.durationMs).toBeGreaterThanOrEqual(1_000);
    expect(result.durationMs).toBeLessThan(4_000);
  });

  it('keeps only the tail of a long output, counting what it dropped', async () => {
    // Act
    const result = await new KubernetesPodExec(kc(), { outputLimitBytes: 1024 }).exec({
      namespace,
      pod,
      container: 'main',
      command: ['sh', '-c', 'i=0; while [ $i -lt 500 ]; do echo "line $i"; i=$((i+1)); done'],
      timeoutMs: 20_000,
    });

    // Assess
    const full = Array.from({ length: 500 }, (_, i) => `line ${i}\n`).join('');
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(full.slice(full.length - 1024));
    expect(result.stdoutDroppedBytes).toBe(full.length - 1024);
  });

  it('refuses a container the pod does not have with the apiserver’s message', async () => {
    // Act
    const running = new KubernetesPodExec(kc()).exec({
      namespace,
      pod,
      container: 'nope',
      command: ['true'],
      timeoutMs: 20_000,
    });

    // Assess
    const error = await running.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PodExecRefused);
    expect((error as PodExecRefused).statusCode).toBe(400);
    expect((error as Error).message).toMatch(/container nope is not valid for pod shell/);
  });

  it('reports a program that cannot start with the runtime’s message and no exit code', async () => {
    // Act
    const result = await new KubernetesPodExec(kc()).exec({
      namespace,
      pod,
      container: 'main',
      command: ['no-such-program'],
      timeoutMs: 20_000,
    });

    // Assess
    expect(result.exitCode).toBeUndefined();
    expect(result.timedOut).toBe(false);
    expect(result.error).toMatch(/"no-such-program": executable file not found/);
  });

  it('refuses a pod that does not exist', async () => {
    // Act
    const error = await new KubernetesPodExec(kc())
      .exec({ namespace, pod: 'gone', container: 'main', command: ['true'], timeoutMs: 20_000 })
      .catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(PodExecRefused);
    expect((error as PodExecRefused).statusCode).toBe(404);
    expect((error as Error).message).toMatch(/pods "gone" not found/);
  });

  it('runs a pod’s annotation pre hook and stops on its onError Fail failure', async () => {
    // Prepare
    const core = kc().makeApiClient(CoreV1Api);
    const object = await core.readNamespacedPod({ namespace, name: pod });
    const facts = hookPodOf(JSON.parse(JSON.stringify(object)));
    const plan = planBlockHooks({
      items: [{ group: '', version: 'v1', resource: 'pods', namespace, name: pod }],
      pods: [facts],
      specs: [{ name: 'ignored', pre: [{ exec: { command: ['sh', '-c', 'echo spec'] } }] }],
    });
    const planned = plan.pods[0];
    if (!planned) throw new Error('no hooks planned');
    const podExec = new KubernetesPodExec(kc());

    // Act
    const outcome = await runPodHooks({
      pod: facts,
      hooks: planned.pre,
      exec: (hook) =>
        podExec.exec({
          namespace,
          pod,
          container: hook.container,
          command: hook.command,
          timeoutMs: hook.timeoutMs,
        }),
    });

    // Assess
    expect(outcome.failed).toBe(true);
    expect(outcome.runs).toHaveLength(1);
    expect(outcome.runs[0]).toMatchObject({
      status: 'failed',
      failure: 'exit code 4',
      hook: { source: 'annotation', container: 'main' },
      result: { stdout: 'frozen\n' },
    });
  });
});
