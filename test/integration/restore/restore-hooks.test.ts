/**
 * Restore hooks through the real apiserver: a namespace backed up with pods carrying restore
 * hook annotations (and pods a spec hook selects) is deleted and restored. The init containers
 * are in the restored pods' specs; the exec hooks run once KWOK reports the containers running,
 * on this machine in `<execDir>/<namespace>/<pod>` (files they write are real), and their output,
 * failures and wait timeouts are in the restore's log, results and status. The hook step runs
 * with a short time per invocation, so the state machine's wait loop is exercised too.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLocalRestore } from '../../../cli/local/restore-runtime.js';
import { KubernetesCluster } from '../../../shared/adapters/kubernetes-cluster.js';
import type { JsonValue } from '../../../shared/adapters/local-state-machine.js';
import { restoreKeys } from '../../../shared/domain/storage/keys.js';
import type { ObjectStore } from '../../../shared/ports/object-store.js';
import { namespaceWithServiceAccount, text } from '../backup/hook-pods.js';
import { backup, backupRequest, tempStore } from '../backup/support.js';
import { kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';

const BUSYBOX = 'busybox:1.36';

async function createPod(
  kc: KubeConfig,
  options: {
    namespace: string;
    name: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    /** A node selector nothing matches: the pod stays Pending, its containers never start. */
    unschedulable?: boolean;
  },
): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  await core.createNamespacedPod({
    namespace: options.namespace,
    body: {
      metadata: { name: options.name, labels: options.labels ?? {}, annotations: options.annotations ?? {} },
      spec: {
        initContainers: [{ name: 'own-init', image: BUSYBOX, command: ['true'] }],
        containers: [{ name: 'main', image: BUSYBOX, command: ['sleep', 'infinity'] }],
        ...(options.unschedulable ? { nodeSelector: { 'lifeboat.test/nowhere': 'true' } } : {}),
      },
    },
  });
  if (options.unschedulable) return;
  await waitFor(
    `pod ${options.name} to run`,
    async () =>
      (await core.readNamespacedPod({ namespace: options.namespace, name: options.name })).status?.phase ===
      'Running',
  );
}

const initNames = (pod: { spec?: { initContainers?: { name: string }[] } }): string[] =>
  (pod.spec?.initContainers ?? []).map((c) => c.name);

describe('restore hooks', () => {
  let kc: KubeConfig;
  let store: ObjectStore;
  const namespace = uniqueName('rhooks');
  const backupName = uniqueName('rhooks-backup');
  const restoreName = uniqueName('rhooks-restore');
  const hookCalls: { pending: number; settled: number }[] = [];
  let preview: JsonValue;
  let output: JsonValue;
  let log: string[];

  const spec = {
    backupName,
    hooks: {
      resources: [
        {
          name: 'seed-and-mark',
          labelSelector: { matchLabels: { app: 'spec' } },
          postHooks: [
            {
              init: {
                initContainers: [
                  { name: 'spec-init', image: BUSYBOX, command: ['/bin/sh', '-c', 'echo spec'] },
                ],
              },
            },
            {
              exec: {
                container: 'main',
                command: ['/bin/sh', '-c', 'echo spec-out && echo spec > spec-ran.txt'],
                execTimeout: '10s',
                waitTimeout: '1m',
              },
            },
          ],
        },
        {
          name: 'fail-first',
          labelSelector: { matchLabels: { app: 'failing' } },
          postHooks: [
            { exec: { command: ['/bin/sh', '-c', 'echo broken >&2; exit 7'], onError: 'Fail' } },
            { exec: { command: ['/bin/sh', '-c', 'echo never > never.txt'] } },
          ],
        },
      ],
    },
  };

  beforeAll(async () => {
    kc = kubeConfigFor(testEnv().clusters.source);
    const core = kc.makeApiClient(CoreV1Api);
    await namespaceWithServiceAccount(kc, namespace);
    await Promise.all([
      createPod(kc, {
        namespace,
        name: 'annotated',
        labels: { app: 'annotated' },
        annotations: {
          'init.hook.restore.velero.io/container-image': BUSYBOX,
          'init.hook.restore.velero.io/container-name': 'restore-seed',
          'init.hook.restore.velero.io/command': '["/bin/sh","-c","echo seeded"]',
          'post.hook.restore.velero.io/container': 'main',
          'post.hook.restore.velero.io/command':
            '["/bin/sh","-c","echo restored-out && echo restored-err >&2 && echo done > hook-ran.txt"]',
          'post.hook.restore.velero.io/exec-timeout': '10s',
        },
      }),
      createPod(kc, { namespace, name: 'spec-hooked', labels: { app: 'spec' } }),
      createPod(kc, { namespace, name: 'failing', labels: { app: 'failing' } }),
      createPod(kc, {
        namespace,
        name: 'stuck',
        labels: { app: 'stuck' },
        unschedulable: true,
        annotations: {
          'post.hook.restore.velero.io/command': '["/bin/sh","-c","echo too late"]',
          'post.hook.restore.velero.io/wait-timeout': '2s',
        },
      }),
    ]);
    store = await tempStore();
    const made = await backup({
      kc,
      store,
      request: backupRequest(backupName, { includedNamespaces: [namespace] }),
    });
    if (!made.ok) throw new Error(`backup failed: ${made.error}: ${made.cause}`);

    await core.deleteNamespace({ name: namespace });
    await waitFor(
      'the namespace to be gone',
      async () => !(await core.listNamespace()).items.some((n) => n.metadata?.name === namespace),
      { timeoutMs: 120_000 },
    );
    const cluster = new KubernetesCluster(kc);
    preview = await runLocalRestore(
      {
        cluster: 'target',
        restore: { metadata: { name: uniqueName('rhooks-dry') }, spec: { ...spec, dryRun: true } },
      },
      { cluster, store },
    );
    output = await runLocalRestore(
      { cluster: 'target', restore: { metadata: { name: restoreName }, spec } },
      {
        cluster,
        store,
        // Short invocations: the stuck pod's 2 s wait spans several, through the Wait state.
        hookStep: { pollMs: 500, waitSeconds: 1 },
        onHooks: (progress) => hookCalls.push(progress),
      },
    );
    log = (await text(store, restoreKeys(restoreName).logs)).split('\n');
  }, 240_000);

  afterAll(async () => {
    await kc.makeApiClient(CoreV1Api).deleteNamespace({ name: namespace });
  });

  it('shows the init containers and exec hooks of the pods it would create in the dry run', () => {
    const entries = (
      preview as { preview: { item: string; initContainers?: string[]; execHooks?: unknown[] }[] }
    ).preview;
    const of = (pod: string) => entries.find((e) => e.item === `${namespace}/${pod}`);
    expect(of('annotated')).toMatchObject({
      initContainers: ['restore-seed'],
      execHooks: [{ container: 'main', hookName: '<from-annotation>' }],
    });
    expect(of('spec-hooked')).toMatchObject({
      initContainers: ['spec-init'],
      execHooks: [{ container: 'main', hookName: 'seed-and-mark' }],
    });
    expect(of('failing')?.execHooks).toHaveLength(2);
    expect(of('failing')?.initContainers).toBeUndefined();
  });

  it('puts the hook init containers first in the restored pods, before the pods’ own', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const annotated = await core.readNamespacedPod({ namespace, name: 'annotated' });
    const specHooked = await core.readNamespacedPod({ namespace, name: 'spec-hooked' });
    const failing = await core.readNamespacedPod({ namespace, name: 'failing' });
    expect(initNames(annotated)).toEqual(['restore-seed', 'own-init']);
    expect(annotated.spec?.initContainers?.[0]).toMatchObject({
      image: BUSYBOX,
      command: ['/bin/sh', '-c', 'echo seeded'],
    });
    expect(initNames(specHooked)).toEqual(['spec-init', 'own-init']);
    expect(initNames(failing)).toEqual(['own-init']);
  });

  it('runs the exec hooks in the restored pods: their output is in the restore log, their files exist', () => {
    const dir = (pod: string) => join(testEnv().clusters.source.execDir, namespace, pod);
    expect(readFileSync(join(dir('annotated'), 'hook-ran.txt'), 'utf8')).toBe('done\n');
    expect(readFileSync(join(dir('spec-hooked'), 'spec-ran.txt'), 'utf8')).toBe('spec\n');
    const line = (parts: string[]) => log.find((l) => parts.every((p) => l.includes(p)));
    expect(line(['msg="stdout: restored-out\\n"', `namespace=${namespace}`, 'name=annotated'])).toBeDefined();
    expect(line(['msg="stderr: restored-err\\n"', 'name=annotated', 'hookPhase=post'])).toBeDefined();
    expect(line(['running exec hook', 'name=spec-hooked', 'hookName=seed-and-mark'])).toBeDefined();
    expect(line(['msg="stdout: spec-out\\n"', 'name=spec-hooked'])).toBeDefined();
  });

  it('stops a pod’s hooks after one fails with onError Fail, and lists every failure as an error', async () => {
    expect(existsSync(join(testEnv().clusters.source.execDir, namespace, 'failing', 'never.txt'))).toBe(
      false,
    );
    const results = JSON.parse(await text(store, restoreKeys(restoreName).results)) as {
      errors: { namespaces?: Record<string, string[]> };
    };
    const errors = results.errors.namespaces?.[namespace] ?? [];
    expect(errors).toEqual(
      expect.arrayContaining([
        `hook fail-first in container main in pod ${namespace}/failing failed: command terminated with exit code 7`,
        `hook fail-first in container main in pod ${namespace}/failing not executed: an earlier hook of the pod failed with onError Fail`,
      ]),
    );
    expect(log.some((l) => l.includes('msg="stderr: broken\\n"') && l.includes('name=failing'))).toBe(true);
  });

  it('reports a hook whose container did not start within its wait timeout, after waiting through the state machine', async () => {
    const results = JSON.parse(await text(store, restoreKeys(restoreName).results)) as {
      errors: { namespaces?: Record<string, string[]> };
    };
    expect(results.errors.namespaces?.[namespace]).toContain(
      `hook from annotation in container main in pod ${namespace}/stuck expired before executing: its container was not running within its wait timeout (2s)`,
    );
    expect(log.some((l) => l.includes('level=error') && l.includes('expired before executing'))).toBe(true);
    // More than one RestoreHooks invocation: the first handed back while the pod was pending.
    expect(hookCalls.length).toBeGreaterThan(1);
    expect(hookCalls[0]?.pending).toBeGreaterThan(0);
    expect(hookCalls.at(-1)).toEqual({ pending: 0, settled: 4 });
  });

  it('ends PartiallyFailed with the hooks counted in the restore’s status', async () => {
    // annotated 1, spec-hooked 1, failing 2 (one failed, one not executed), stuck 1 (expired).
    expect(output).toMatchObject({
      name: restoreName,
      phase: 'PartiallyFailed',
      hooksAttempted: 5,
      hooksFailed: 3,
    });
    const status = JSON.parse(await text(store, restoreKeys(restoreName).status)) as {
      status: { phase: string; hookStatus: unknown; errors: number };
    };
    expect(status.status).toMatchObject({
      phase: 'PartiallyFailed',
      hookStatus: { hooksAttempted: 5, hooksFailed: 3 },
    });
    expect(status.status.errors).toBe(3);
  });
});
