/** What the main thread and an ItemBlock worker thread (item-block-thread.ts) say to each other. */

/** Given to the thread as its workerData. */
export interface ThreadSettings {
  /** The directory of the backup's LocalDirectoryStore. */
  readonly storeRoot: string;
  /** The backed-up cluster's kubeconfig (YAML), for CSI snapshots. */
  readonly kubeconfig: string;
  /** The kubeconfig hooks run with (the cluster's, unless the options gave another). */
  readonly execKubeconfig: string;
  /** Whether CSI snapshots are taken through the cluster's own API. */
  readonly csi: boolean;
  readonly fileAccess?: 'local-paths';
  readonly inlineHookLimitMs?: number;
}

/** One ItemBlock message to back up. */
export interface ToThread {
  readonly id: number;
  readonly body: string;
}

export type FromThread =
  | { readonly type: 'ready' }
  | { readonly type: 'done'; readonly id: number; readonly items: number }
  | { readonly type: 'failed'; readonly id: number; readonly error: { name: string; message: string } }
  | {
      readonly type: 'callback';
      readonly method: 'succeed' | 'fail';
      readonly token: string;
      readonly output: unknown;
    };
