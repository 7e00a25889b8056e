/**
 * BackupItemBlock's choice of the blocks left for a long hook run: it must not depend on how long
 * hooks happened to take, or a redelivered message could back up inline a block its first
 * delivery had already left for the long run, and the block would be in the backup twice.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backupItemBlocks } from '../../../../functions/backup-item-block/backup-item-block.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import { LocalTaskCallbacks } from '../../../../shared/adapters/local-task-callbacks.js';
import type { ItemBlockMessage } from '../../../../shared/contracts/backup-run.js';
import { backupWorkKeys } from '../../../../shared/domain/storage/keys.js';
import type { PodExec } from '../../../../shared/ports/pod-exec.js';

const backup = { name: 'nightly', runId: 'run-1', startedAt: '2026-01-01T00:00:00.000Z' };

const pod = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    namespace: 'shop',
    annotations: {
      'pre.hook.backup.velero.io/command': '["/bin/true"]',
      'pre.hook.backup.velero.io/timeout': '3s',
    },
  },
  spec: { containers: [{ name: 'app', image: 'app' }] },
  status: { phase: 'Running' },
});

const message: ItemBlockMessage = {
  backup,
  messageId: 'm-1',
  blocks: ['a', 'b'].map((name) => ({
    id: `block-${name}`,
    items: [
      {
        ref: { group: '', version: 'v1', resource: 'pods', namespace: 'shop', name },
        kind: 'Pod',
        preferred: true,
        json: JSON.stringify(pod(name)),
      },
    ],
  })),
};

/** One delivery whose every hook command takes `hookMs` on the worker's clock. */
async function deliver(hookMs: number): Promise<string[]> {
  const store = new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'lifeboat-deferral-')));
  const work = backupWorkKeys(backup);
  await store.put(
    work.request,
    JSON.stringify({ cluster: 'c', backup: { metadata: { name: backup.name }, spec: {} } }),
    { contentType: 'application/json' },
  );
  let now = Date.parse(backup.startedAt);
  const podExec: PodExec = {
    async exec() {
      now += hookMs;
      return {
        exitCode: 0,
        stdout: '',
        stderr: '',
        timedOut: false,
        durationMs: hookMs,
        stdoutDroppedBytes: 0,
        stderrDroppedBytes: 0,
      };
    },
  };
  await backupItemBlocks(message, {
    store,
    callbacks: new LocalTaskCallbacks(),
    clock: { now: () => new Date(now) },
    podExecFor: async () => podExec,
    inlineHookLimitMs: 5_000,
  });
  return (await store.list(work.deferredDir)).map((key) => key.slice(work.deferredDir.length));
}

describe('BackupItemBlock leaving blocks for a long hook run', () => {
  it('leaves the same blocks whatever the hooks took, charging each block its worst case', async () => {
    const fast = await deliver(0);
    const slow = await deliver(2_500);
    // Two blocks of 3 s worst case against a 5 s limit: the second never fits.
    expect(fast).toEqual(['m-1/block-b.json']);
    expect(slow).toEqual(fast);
  });
});
