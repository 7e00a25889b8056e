/**
 * A hook longer than a worker may run: with the inline limit shortened to 1 s, a pre hook with a
 * 3 s timeout (running `sleep 2`) is left by the worker for the LongHookBlocks stage, whose
 * `ecs:runTask.sync` task runs here as the hook runner's child process. Verified from the
 * execution's history, the backup log and the tarball.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutionEvent, JsonValue } from '../../../shared/adapters/local-state-machine.js';
import { backupKeys } from '../../../shared/domain/storage/keys.js';
import type { ObjectStore } from '../../../shared/ports/object-store.js';
import { itemsIn, readArchive } from '../support/archive.js';
import { kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import { namespaceWithServiceAccount, runningPod, text } from './hook-pods.js';
import { backup, backupRequest, tempStore } from './support.js';

describe('a hook longer than a worker may run', () => {
  let kc: KubeConfig;
  const namespace = uniqueName('long-hooks');
  const name = uniqueName('long');
  let store: ObjectStore;
  let output: JsonValue;
  let log: string[];
  const history: ExecutionEvent[] = [];

  beforeAll(async () => {
    kc = kubeConfigFor(testEnv().clusters.source);
    await namespaceWithServiceAccount(kc, namespace);
    await Promise.all([
      runningPod(kc, {
        namespace,
        name: 'slow-freeze',
        annotations: {
          'pre.hook.backup.velero.io/command':
            '["/bin/sh","-c","sleep 2 && echo frozen-for-long > long-marker && echo slept"]',
          'pre.hook.backup.velero.io/timeout': '3s',
          'post.hook.backup.velero.io/command': '["/bin/sh","-c","cat long-marker && rm long-marker"]',
          'post.hook.backup.velero.io/timeout': '1s',
        },
      }),
      // Its hook fits in the limit (1 s; the 30 s default would not): a worker backs it up.
      runningPod(kc, {
        namespace,
        name: 'quick',
        annotations: {
          'pre.hook.backup.velero.io/command': '["/bin/sh","-c","echo quick"]',
          'pre.hook.backup.velero.io/timeout': '1s',
        },
      }),
    ]);
    store = await tempStore();
    const outcome = await backup({
      kc,
      store,
      request: backupRequest(name, { includedNamespaces: [namespace] }),
      extra: { inlineHookLimitSeconds: 1, onExecutionEvent: (event) => history.push(event) },
    });
    if (!outcome.ok) throw new Error(`backup failed: ${outcome.error}: ${outcome.cause}`);
    output = outcome.output;
    log = (await text(store, backupKeys(name).logs)).split('\n');
  }, 240_000);

  afterAll(async () => {
    await kc.makeApiClient(CoreV1Api).deleteNamespace({ name: namespace });
  });

  const entered = (state: string) =>
    history.filter((e) => e.type === 'StateEntered' && 'state' in e && e.state.name === state);
  const exited = (state: string) =>
    history.filter((e) => e.type === 'StateExited' && 'state' in e && e.state.name === state);

  it('runs the deferred block through the RunLongHookBlock task, after every other block is done', () => {
    const runs = entered('RunLongHookBlock');
    expect(runs).toHaveLength(1);
    const input = runs[0] && 'state' in runs[0] ? (runs[0].state.input as { block?: string }) : {};
    expect(input.block).toMatch(/^[^/]+\/[^/]+$/);
    expect(exited('RunLongHookBlock')).toHaveLength(1);
    // The ItemBlocks wait ended (every message, the quick pod's block included) before the long run began.
    const waitEnd = history.findIndex(
      (e) => e.type === 'StateExited' && 'state' in e && e.state.name === 'CollectItems',
    );
    expect(waitEnd).toBeGreaterThan(-1);
    expect(history.indexOf(runs[0] as ExecutionEvent)).toBeGreaterThan(waitEnd);
    expect(
      history.findIndex(
        (e) => e.type === 'StateEntered' && 'state' in e && e.state.name === 'FinalizeBackup',
      ),
    ).toBeGreaterThan(history.indexOf(exited('RunLongHookBlock')[0] as ExecutionEvent));
  });

  it('completes the hook past the inline limit, pre hook → pod → post hook, as the log shows', () => {
    const at = (parts: string[]) => log.findIndex((line) => parts.every((p) => line.includes(p)));
    const pod = [`namespace=${namespace}`, 'name=slow-freeze'];
    expect(at(['ItemBlock left for a long hook run', 'hooksUpTo=4s', 'inlineLimit=1s'])).toBeGreaterThan(-1);
    const started = at(['Long hook run of an ItemBlock started']);
    const pre = at(['msg="stdout: slept\\n"', ...pod, 'hookPhase=pre', 'hookTimeout=3s']);
    const item = at(['Backed up item', ...pod, 'resource=pods']);
    const post = at(['msg="stdout: frozen-for-long\\n"', ...pod, 'hookPhase=post']);
    expect(started).toBeGreaterThan(-1);
    expect(pre).toBeGreaterThan(started);
    expect(item).toBeGreaterThan(pre);
    expect(post).toBeGreaterThan(item);
    expect(at(['level=error'])).toBe(-1);
    expect(existsSync(join(testEnv().clusters.source.execDir, namespace, 'slow-freeze', 'long-marker'))).toBe(
      false,
    );
  });

  it('puts both pods in the tarball and counts every hook', async () => {
    const items = itemsIn(await readArchive(store, backupKeys(name).contents));
    expect(items).toContain(`pods/${namespace}/slow-freeze`);
    expect(items).toContain(`pods/${namespace}/quick`);
    expect(output).toMatchObject({ name, phase: 'Completed', errors: 0 });
    const document = JSON.parse(await text(store, backupKeys(name).metadata)) as {
      status: { hookStatus?: unknown };
    };
    expect(document.status.hookStatus).toEqual({ hooksAttempted: 3 });
  });
});
