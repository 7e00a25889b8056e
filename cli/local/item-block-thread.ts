/**
 * The local backup's ItemBlock worker in a worker thread (item-block-threads.ts starts it from
 * a bundle of this file): the same BackupItemBlock use case a Lambda runs, on messages the main
 * thread hands over one at a time, so item blocks are backed up beside the listing instead of
 * between its pages. Writes to the same directory store; wakes the state machine through the
 * main thread, which holds the task token's waiter. Reaches the cluster (hooks, CSI) only when
 * a block needs it, with the kubeconfig the main thread gave.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { backupItemBlocks } from '../../functions/backup-item-block/backup-item-block.js';
import { LocalDirectoryStore } from '../../shared/adapters/local-directory-store.js';
import { systemClock } from '../../shared/adapters/system-clock.js';
import { parseItemBlockMessage } from '../../shared/contracts/item-block-wire.js';
import type { CsiSnapshots } from '../../shared/ports/csi-snapshots.js';
import type { PodExec } from '../../shared/ports/pod-exec.js';
import type { TaskCallbacks } from '../../shared/ports/task-callbacks.js';
import type { FromThread, ThreadSettings, ToThread } from './item-block-thread-protocol.js';

const port = parentPort;
if (!port) throw new Error('item-block-thread runs only as a worker thread');
const settings = workerData as ThreadSettings;
const store = new LocalDirectoryStore(settings.storeRoot);

const post = (message: FromThread): void => port.postMessage(message);

/** The state machine's waiter lives in the main thread: completing a task is a message there. */
const callbacks: TaskCallbacks = {
  succeed: async (token, output) => post({ type: 'callback', method: 'succeed', token, output }),
  fail: async (token, error) => post({ type: 'callback', method: 'fail', token, output: error }),
};

let podExec: Promise<PodExec> | undefined;
let csi: Promise<CsiSnapshots> | undefined;

async function consume(body: string): Promise<number> {
  const result = await backupItemBlocks(parseItemBlockMessage(body), {
    store,
    callbacks,
    clock: systemClock,
    podExecFor: () => {
      podExec ??= (async () => {
        const [{ KubernetesPodExec }, { clusterFromKubeconfig }] = await Promise.all([
          import('../../shared/adapters/kubernetes-pod-exec.js'),
          import('../../shared/adapters/kubernetes-cluster.js'),
        ]);
        const exec = await clusterFromKubeconfig({ text: settings.execKubeconfig });
        return new KubernetesPodExec(exec.kubeConfig);
      })();
      return podExec;
    },
    ...(settings.csi
      ? {
          csiFor: () => {
            csi ??= (async () => {
              const [{ KubernetesCsiSnapshots }, { clusterFromKubeconfig }] = await Promise.all([
                import('../../shared/adapters/kubernetes-csi-snapshots.js'),
                import('../../shared/adapters/kubernetes-cluster.js'),
              ]);
              return new KubernetesCsiSnapshots(await clusterFromKubeconfig({ text: settings.kubeconfig }));
            })();
            return csi;
          },
        }
      : {}),
    ...(settings.fileAccess ? { fileAccess: settings.fileAccess } : {}),
    ...(settings.inlineHookLimitMs !== undefined ? { inlineHookLimitMs: settings.inlineHookLimitMs } : {}),
  });
  return result.items.length;
}

port.on('message', (message: ToThread) => {
  consume(message.body).then(
    (items) => post({ type: 'done', id: message.id, items }),
    (error: unknown) =>
      post({
        type: 'failed',
        id: message.id,
        error: {
          name: error instanceof Error ? error.name : 'Error',
          message: error instanceof Error ? error.message : String(error),
        },
      }),
  );
});
post({ type: 'ready' });
