/**
 * Backup exec hooks through the real apiserver: KWOK's node runs each hook command on this
 * machine in `<execDir>/<namespace>/<pod>`, so files a hook writes and removes, exit codes,
 * output and timeouts are real. One backup of five pods covers annotation and spec hooks.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonValue } from '../../../shared/adapters/local-state-machine.js';
import { backupKeys } from '../../../shared/domain/storage/keys.js';
import type { ObjectStore } from '../../../shared/ports/object-store.js';
import { itemsIn, readArchive } from '../support/archive.js';
import { kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import { claimOnHostPath, namespaceWithServiceAccount, runningPod, text } from './hook-pods.js';
import { backup, backupRequest, tempStore } from './support.js';

/** Index of the first log line matching every part, after `from`; -1 when none. */
function lineIndex(lines: readonly string[], parts: readonly string[], from = 0): number {
  for (let i = from; i < lines.length; i++) if (parts.every((p) => lines[i]?.includes(p))) return i;
  return -1;
}

describe('backup hooks around each ItemBlock', () => {
  let kc: KubeConfig;
  const namespace = uniqueName('hooks');
  const name = uniqueName('hooked');
  const volume = `${namespace}-data`;
  let store: ObjectStore;
  let output: JsonValue;
  let log: string[];

  beforeAll(async () => {
    kc = kubeConfigFor(testEnv().clusters.source);
    await namespaceWithServiceAccount(kc, namespace);
    await claimOnHostPath(kc, { namespace, claim: 'fragile-data', volume, path: '/tmp/lifeboat-hooks' });
    await Promise.all([
      // Annotation hooks: the pre hook writes a file in the pod's work directory, the post hook
      // reads and removes it. A spec hook also selects this pod: the annotations win.
      runningPod(kc, {
        namespace,
        name: 'db',
        labels: { app: 'db' },
        annotations: {
          'pre.hook.backup.velero.io/command':
            '["/bin/sh","-c","echo frozen > hook-marker && echo pre-out && echo pre-err >&2"]',
          'post.hook.backup.velero.io/command': '["/bin/sh","-c","cat hook-marker && rm hook-marker"]',
        },
      }),
      // The legacy unprefixed annotation is a pre hook; Fail takes the pod and its PVC out.
      runningPod(kc, {
        namespace,
        name: 'fragile',
        labels: { app: 'fragile' },
        claim: 'fragile-data',
        annotations: {
          'hook.backup.velero.io/command': '["/bin/sh","-c","echo cannot freeze >&2; exit 3"]',
          'hook.backup.velero.io/on-error': 'Fail',
          'post.hook.backup.velero.io/command': '["/bin/sh","-c","echo never"]',
        },
      }),
      runningPod(kc, { namespace, name: 'slow', labels: { app: 'slow' } }),
      runningPod(kc, { namespace, name: 'odd', labels: { app: 'odd' } }),
      runningPod(kc, { namespace, name: 'plain', labels: { app: 'plain' } }),
    ]);

    store = await tempStore();
    const outcome = await backup({
      kc,
      store,
      request: backupRequest(name, {
        includedNamespaces: [namespace],
        hooks: {
          resources: [
            {
              name: 'freeze-slow',
              labelSelector: { matchLabels: { app: 'slow' } },
              pre: [{ exec: { command: ['/bin/sh', '-c', 'sleep 5'], timeout: '1s' } }],
            },
            {
              name: 'wrong-container',
              includedResources: ['pods'],
              labelSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['odd', 'db'] }] },
              pre: [{ exec: { container: 'nope', command: ['true'] } }],
            },
          ],
        },
      }),
    });
    if (!outcome.ok) throw new Error(`backup failed: ${outcome.error}: ${outcome.cause}`);
    output = outcome.output;
    log = (await text(store, backupKeys(name).logs)).split('\n');
  });

  afterAll(async () => {
    await kc.makeApiClient(CoreV1Api).deleteNamespace({ name: namespace });
    await kc.makeApiClient(CoreV1Api).deletePersistentVolume({ name: volume });
  });

  it('runs the pre hook, then backs up the pod, then runs the post hook, as the log lines show', () => {
    const pod = [`namespace=${namespace}`, 'name=db'];
    const running = lineIndex(log, ['running exec hook', ...pod, 'hookPhase=pre']);
    const preOut = lineIndex(log, ['msg="stdout: pre-out\\n"', ...pod, 'hookPhase=pre']);
    const preErr = lineIndex(log, ['msg="stderr: pre-err\\n"', ...pod]);
    const item = lineIndex(log, ['Backed up item', ...pod, 'resource=pods']);
    const post = lineIndex(log, ['running exec hook', ...pod, 'hookPhase=post']);
    // The post hook printed what the pre hook wrote: the file existed between them.
    const postOut = lineIndex(log, ['msg="stdout: frozen\\n"', ...pod, 'hookPhase=post']);
    expect(running).toBeGreaterThanOrEqual(0);
    expect(preOut).toBeGreaterThan(running);
    expect(preErr).toBeGreaterThan(running);
    expect(item).toBeGreaterThan(preOut);
    expect(post).toBeGreaterThan(item);
    expect(postOut).toBeGreaterThan(post);
    expect(lineIndex(log, ['hookName=wrong-container', ...pod])).toBe(-1);
  });

  it('leaves the pod’s work directory as the post hook left it: the file is gone', () => {
    const dir = join(testEnv().clusters.source.execDir, namespace, 'db');
    expect(existsSync(dir)).toBe(true);
    expect(existsSync(join(dir, 'hook-marker'))).toBe(false);
  });

  it('keeps a pod whose Fail pre hook failed, and the PVC only it mounts, out of the tarball', async () => {
    const items = itemsIn(await readArchive(store, backupKeys(name).contents));
    expect(items).toContain(`pods/${namespace}/db`);
    expect(items).toContain(`pods/${namespace}/slow`);
    expect(items).toContain(`pods/${namespace}/plain`);
    expect(items).not.toContain(`pods/${namespace}/fragile`);
    expect(items).not.toContain(`persistentvolumeclaims/${namespace}/fragile-data`);
    expect(items).not.toContain(`persistentvolumes//${volume}`);
    // Both were in the pod's block, and left out for its failed hook.
    expect(
      lineIndex(log, ['Skipped item', 'resource=persistentvolumeclaims', 'name=fragile-data']),
    ).toBeGreaterThan(-1);
    expect(lineIndex(log, ['Skipped item', 'resource=persistentvolumes', `name=${volume}`])).toBeGreaterThan(
      -1,
    );
    expect(lineIndex(log, ['hookPhase=post', `namespace=${namespace}`, 'name=fragile'])).toBe(-1);
  });

  it('lists every hook failure as an error of the pod’s namespace, a timeout as a timeout', async () => {
    const results = JSON.parse(await text(store, backupKeys(name).results)) as {
      errors: { namespaces?: Record<string, string[]> };
    };
    const errors = results.errors.namespaces?.[namespace] ?? [];
    expect(errors).toHaveLength(3);
    expect(errors).toContainEqual(
      `pre annotation hook in ${namespace}/fragile container main failed: exit code 3`,
    );
    expect(errors).toContainEqual(
      `pre hook freeze-slow in ${namespace}/slow container main failed: timed out after 1s`,
    );
    expect(errors).toContainEqual(
      `pre hook wrong-container in ${namespace}/odd container nope failed: pod ${namespace}/odd has no container "nope"`,
    );
    expect(
      lineIndex(log, ['level=error', 'Error executing hook', 'name=slow', 'error="timed out after 1s"']),
    ).toBeGreaterThan(-1);
    expect(lineIndex(log, ['msg="stderr: cannot freeze\\n"', 'name=fragile'])).toBeGreaterThan(-1);
  });

  it('ends PartiallyFailed with the hooks counted in velero-backup.json', async () => {
    expect(output).toMatchObject({ name, phase: 'PartiallyFailed' });
    const document = JSON.parse(await text(store, backupKeys(name).metadata)) as {
      status: { phase: string; hookStatus?: unknown; errors?: number };
    };
    expect(document.status.phase).toBe('PartiallyFailed');
    // db: pre and post; fragile, slow and odd: one pre hook each, failed.
    expect(document.status.hookStatus).toEqual({ hooksAttempted: 5, hooksFailed: 3 });
    expect(document.status.errors).toBe(3);
  });
});
