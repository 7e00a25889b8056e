/**
 * What a `lifeboat --local` backup is given (its options and the progress it reports), and what
 * one run makes of them once and shares between its Task handlers and its ItemBlock workers: the
 * clock, the task callbacks, exec for hooks, snapshot clients. Makes clients; never calls them.
 */
import { KubernetesCluster } from '../../shared/adapters/kubernetes-cluster.js';
import { KubernetesCsiSnapshots } from '../../shared/adapters/kubernetes-csi-snapshots.js';
import { KubernetesPodExec } from '../../shared/adapters/kubernetes-pod-exec.js';
import type { ExecutionEvent } from '../../shared/adapters/local-state-machine.js';
import { LocalTaskCallbacks } from '../../shared/adapters/local-task-callbacks.js';
import { systemClock } from '../../shared/adapters/system-clock.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { Cluster } from '../../shared/ports/cluster.js';
import type { CsiSnapshots } from '../../shared/ports/csi-snapshots.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { PodExec } from '../../shared/ports/pod-exec.js';
import type { SnapshotCopies } from '../../shared/ports/snapshot-copies.js';
import type { Snapshotter } from '../../shared/ports/snapshotter.js';
import type { LocalDataMover } from './local-data-mover.js';
import { LOCAL_CLAIM_LEASE_SECONDS, RunClaim } from './run-claim.js';

export type ProgressEvent =
  | { readonly type: 'state'; readonly state: string }
  | { readonly type: 'collected'; readonly blocks: number; readonly items: number }
  /** Worker threads were wanted but none can work (item-block-threads.ts): the workers run here. */
  | { readonly type: 'workers-in-process'; readonly reason: string }
  | {
      readonly type: 'message-done';
      readonly items: number;
      /** Whether a worker thread backed the message up (item-block-threads.ts), not this one. */
      readonly inThread: boolean;
      /** Which worker thread (its threadId). */
      readonly thread?: number;
    };

export interface LocalBackupOptions {
  readonly cluster: Cluster;
  readonly store: ObjectStore;
  readonly clock?: Clock;
  readonly workers?: number;
  /**
   * Worker threads the ItemBlock workers run in (item-block-threads.ts); 0: in this thread.
   * Default: the cores but one, at most 4, none on 2 cores or fewer (defaultItemBlockThreads).
   * Threads are used only with a directory store, a Kubernetes cluster and none of the
   * in-process stand-ins below (wrapWorker, podExec, snapshotter, csiSnapshots, clock);
   * otherwise the workers run in this thread.
   */
  readonly threads?: number;
  readonly maxReceiveCount?: number;
  readonly itemBlocksTimeoutSeconds?: number;
  readonly pageSize?: number;
  readonly maxMessageBytes?: number;
  readonly onProgress?: (event: ProgressEvent) => void;
  /** Wraps the worker, e.g. for fault tests; the default runs it unchanged. */
  readonly wrapWorker?: (worker: (body: string) => Promise<void>) => (body: string) => Promise<void>;
  /** The execution's history, event by event (states entered and exited, Map iterations). */
  readonly onExecutionEvent?: (event: ExecutionEvent) => void;
  /** The execution's name, its run id (the local server's, named as the API names them); default a fresh one. */
  readonly executionName?: string;
  /** Exec for hooks; unset: through the cluster's own kubeconfig (a KubernetesCluster's). */
  readonly podExec?: PodExec;
  /** EC2 for native EBS snapshots of the cluster's PVs; unset: such snapshots fail, saying so. */
  readonly snapshotter?: Snapshotter;
  /** Shares and copies snapshots for copySnapshots; unset: those copies fail, saying so. */
  readonly snapshotCopies?: SnapshotCopies;
  /** CSI snapshots on the cluster; unset: through the cluster itself (a KubernetesCluster), false: none. */
  readonly csiSnapshots?: CsiSnapshots | false;
  /** The first wait between looks at volume operations (deployed: 10 s). */
  readonly volumePollSeconds?: number;
  /** How long a worker runs one message's hooks before leaving blocks to the hook runner. */
  readonly inlineHookLimitSeconds?: number;
  /**
   * The hook runner's task, run as a child process: variables that reach a store other than a
   * directory (LIFEBOAT_BUCKET, AWS_*), and the kubeconfig (unset: the cluster's own).
   */
  readonly hookRunner?: {
    readonly storeEnvironment?: Record<string, string>;
    readonly kubeConfig?: KubeConfig;
  };
  /**
   * The data mover, run as a child process for each job (snapshotMoveData, fs-backup): the
   * repository its jobs name (a directory or a bucket, and the key that wraps its data key), the
   * region of the volumes' snapshots, and variables for the process (AWS endpoint and
   * credentials). Unset: volumes to move fail, saying so. fs-backup reads local PVs' directories
   * on this machine.
   */
  readonly dataMover?: LocalDataMover;
  /** The lease of the run's claim on its name, renewed while the run lives (default 30 s). */
  readonly claimLeaseSeconds?: number;
}

/** The credentials a KubernetesCluster reaches its cluster with (client-node's KubeConfig). */
type KubeConfig = KubernetesCluster['kubeConfig'];

/** Snapshot clients for the volume steps and the workers (none given: such volumes fail, saying so). */
export interface VolumeDeps {
  readonly snapshotter?: Snapshotter;
  readonly snapshotCopies?: SnapshotCopies;
  readonly csiFor?: (cluster: string) => Promise<CsiSnapshots>;
}

/** What the Task handlers and the ItemBlock workers of one local backup share. */
export interface LocalBackupRun {
  readonly options: LocalBackupOptions;
  readonly store: ObjectStore;
  readonly clock: Clock;
  /** The task tokens the state machine waits on, completed by the workers. */
  readonly callbacks: LocalTaskCallbacks;
  readonly progress: (event: ProgressEvent) => void;
  readonly podExec: () => Promise<PodExec>;
  readonly volumeDeps: VolumeDeps;
  /** The run's claim on its name, renewed from validation until the run ends. */
  readonly claim: RunClaim;
}

export function localBackupRun(options: LocalBackupOptions): LocalBackupRun {
  const clock = options.clock ?? systemClock;
  return {
    options,
    store: options.store,
    clock,
    claim: new RunClaim({
      store: options.store,
      clock,
      leaseSeconds: options.claimLeaseSeconds ?? LOCAL_CLAIM_LEASE_SECONDS,
    }),
    callbacks: new LocalTaskCallbacks(),
    progress: options.onProgress ?? (() => undefined),
    podExec: podExecOf(options),
    volumeDeps: volumeDepsOf(options),
  };
}

export function kubeConfigOf(options: LocalBackupOptions): KubeConfig {
  if (options.hookRunner?.kubeConfig) return options.hookRunner.kubeConfig;
  if (options.cluster instanceof KubernetesCluster) return options.cluster.kubeConfig;
  throw new LifeboatError('hooks need a Kubernetes cluster reached through a kubeconfig');
}

/** Hooks run in the backed-up cluster, reached with the same credentials as its listing. */
function podExecOf(options: LocalBackupOptions): () => Promise<PodExec> {
  return async () => {
    if (options.podExec) return options.podExec;
    return new KubernetesPodExec(kubeConfigOf(options));
  };
}

/** Native snapshots through the given EC2; CSI through the cluster's own API unless turned off. */
function volumeDepsOf(options: LocalBackupOptions): VolumeDeps {
  const csi =
    options.csiSnapshots === false
      ? undefined
      : (options.csiSnapshots ??
        (options.cluster instanceof KubernetesCluster
          ? new KubernetesCsiSnapshots(options.cluster)
          : undefined));
  return {
    ...(options.snapshotter ? { snapshotter: options.snapshotter } : {}),
    ...(options.snapshotCopies ? { snapshotCopies: options.snapshotCopies } : {}),
    ...(csi ? { csiFor: async () => csi } : {}),
  };
}
