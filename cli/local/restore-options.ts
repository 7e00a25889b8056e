/**
 * What a `lifeboat --local` restore is given: the cluster and backup location, the stand-ins for
 * Lambda's clients and timings, and the callbacks that report its progress. Types only.
 */
import type { KubernetesCluster } from '../../shared/adapters/kubernetes-cluster.js';
import type { ExecutionEvent } from '../../shared/adapters/local-state-machine.js';
import type { ChunkTotals } from '../../shared/contracts/restore-run.js';
import type { VolumeHome } from '../../shared/domain/volumes/snapshot-copies.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { Cluster, ClusterWriter } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { PodExec } from '../../shared/ports/pod-exec.js';
import type { Snapshotter, SnapshotterAt } from '../../shared/ports/snapshotter.js';
import type { LocalDataMover } from './local-data-mover.js';

/** One RestorePhase invocation that returned, with when it ran (performance.now() milliseconds). */
export interface ChunkRestored {
  readonly groupResource: string;
  readonly chunk: number;
  readonly totals: ChunkTotals;
  readonly startedMs: number;
  readonly finishedMs: number;
}

export interface LocalRestoreOptions {
  readonly cluster: Cluster & ClusterWriter;
  readonly store: ObjectStore;
  readonly clock?: Clock;
  /**
   * EC2, for volumes re-created from native snapshots; unset, one on the ambient AWS
   * configuration is made when a restore first needs it.
   */
  readonly snapshotter?: Snapshotter;
  /**
   * How the volume steps spend their time, as in Lambda unless set: polling within one call
   * (`pollWithinMs`, 20 s; `pollIntervalMs`, 2 s) and how long a re-provisioned PVC may stay
   * unbound before its PV patch is given up (`bindTimeoutMs`, 10 min).
   */
  readonly volumeStep?: {
    readonly pollWithinMs?: number;
    readonly pollIntervalMs?: number;
    readonly bindTimeoutMs?: number;
  };
  /**
   * Item writes in flight at once over the whole restore, shared by the parallel RestorePhase
   * invocations (as one invocation had before chunks fanned out). Unset: each invocation writes
   * up to 16 at once, as in Lambda.
   */
  readonly concurrency?: number;
  /** Items per chunk written by PlanRestore (500 unless set); small values make many invocations. */
  readonly chunkSize?: number;
  /** Called once a phase's chunks are all restored, with the phase's totals. */
  readonly onPhase?: (phase: string, totals: ChunkTotals) => void;
  /** Called when a RestorePhase invocation returns. */
  readonly onChunk?: (restored: ChunkRestored) => void;
  /**
   * Runs restore exec hooks; unset, the cluster's own credentials are used when it is a
   * KubernetesCluster (otherwise hooks fail as not runnable).
   */
  readonly podExec?: PodExec;
  /**
   * How one RestoreHooks invocation spends its time, as in Lambda unless set: looking for
   * containers (`pollMs`, 60 s), at most (`maxRunMs`, 14 min) and the state machine's wait in
   * between (`waitSeconds`, 1 s locally).
   */
  readonly hookStep?: { readonly pollMs?: number; readonly maxRunMs?: number; readonly waitSeconds?: number };
  /** Called when a RestoreHooks invocation returns, with the pods still waiting. */
  readonly onHooks?: (progress: { pending: number; settled: number }) => void;
  /** Called with each event of the execution's history, as Step Functions records it. */
  readonly onExecutionEvent?: (event: ExecutionEvent) => void;
  /** The execution's name, its run id (the local server's, named as the API names them); default a fresh one. */
  readonly executionName?: string;
  /** A recipe hook step whose commands could run longer than this goes to the hook runner (600 s). */
  readonly inlineHookLimitSeconds?: number;
  /**
   * The hook runner's task, run as a child process: variables that reach a store other than a
   * directory (LIFEBOAT_BUCKET, AWS_*), and the kubeconfig (unset: the cluster's own).
   */
  readonly hookRunner?: {
    readonly storeEnvironment?: Record<string, string>;
    readonly kubeConfig?: KubernetesCluster['kubeConfig'];
  };
  /**
   * The data mover, run as a child process for each volume whose data is in its repository:
   * the repository, the default region of restored volumes and the process's variables (AWS
   * endpoint and credentials). Unset: such volumes are errors of the restore, saying so.
   */
  readonly dataMover?: LocalDataMover;
  /** The lease of the run's claim on its name, renewed while the run lives (default 30 s). */
  readonly claimLeaseSeconds?: number;
  /**
   * EC2 where a request sends its volumes (volumeRegion, volumeAccountRoleArn through STS
   * AssumeRole); unset, one on the ambient AWS configuration is made.
   */
  readonly snapshotterAt?: SnapshotterAt;
  /**
   * A DR restore's own account and region (as a DR deployment's LIFEBOAT_DEPLOYMENT_ACCOUNT and
   * AWS_REGION): every volume lands there, from the snapshot copies made for it.
   */
  readonly volumeHome?: VolumeHome;
}
