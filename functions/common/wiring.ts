/**
 * The deployed functions' adapters, created once per Lambda container from the environment.
 */
import { awsAdapters } from '../../shared/adapters/aws-adapters.js';
import { BackupLocationStore } from '../../shared/adapters/backup-location-store.js';
import type { KubernetesCluster } from '../../shared/adapters/kubernetes-cluster.js';
import { KubernetesCsiSnapshots } from '../../shared/adapters/kubernetes-csi-snapshots.js';
import { systemClock } from '../../shared/adapters/system-clock.js';
import type { RepositoryLocation } from '../../shared/contracts/data-mover-job.js';
import { backupKeys, restoreKeys } from '../../shared/domain/storage/keys.js';
import type { VolumeHome } from '../../shared/domain/volumes/snapshot-copies.js';
import type { CsiSnapshots } from '../../shared/ports/csi-snapshots.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { PodExec } from '../../shared/ports/pod-exec.js';
import type { Snapshotter } from '../../shared/ports/snapshotter.js';
import type { WorkQueue } from '../../shared/ports/work-queue.js';
import { readEnv, requireQueueUrl } from '../../shared/runtime/env.js';
import { DR_LOCATION, drSourceLocation } from './dr-location.js';
import { renewClaim } from './name-claim.js';
import { type RestoreRepository, restoreRepositoryOf } from './restore-repository.js';

export const env = readEnv();
const aws = awsAdapters({
  region: env.AWS_REGION,
  bucket: env.LIFEBOAT_BUCKET,
  prefix: env.LIFEBOAT_PREFIX,
  forcePathStyle: env.LIFEBOAT_S3_FORCE_PATH_STYLE === 'true',
});

export const clock = systemClock;
// A DR deployment reads backups its own store does not hold from the DR source location.
const drSource = drSourceLocation(env);
export const store = drSource ? new BackupLocationStore(aws.store, drSource) : aws.store;
/** Named backup locations besides the deployment's own, listed read only. */
export const locations: Readonly<Record<string, ObjectStore>> = drSource ? { [DR_LOCATION]: drSource } : {};
export const callbacks = aws.callbacks;

/**
 * A DR deployment's own account and region: where its restores' volumes land, from the snapshot
 * copies made for it (PlanRestore); undefined elsewhere.
 */
export const volumeHome: VolumeHome | undefined = drSource
  ? {
      ...(env.LIFEBOAT_DEPLOYMENT_ACCOUNT ? { account: env.LIFEBOAT_DEPLOYMENT_ACCOUNT } : {}),
      region: env.AWS_REGION,
    }
  : undefined;

/** EC2 for native snapshots, in the function's region. */
export function snapshotter(): Snapshotter {
  return aws.snapshotter();
}

export function queue(): WorkQueue {
  return aws.queue(requireQueueUrl(env));
}

export function clusterNamed(name: string): Promise<KubernetesCluster> {
  return aws.clusterNamed(name);
}

export function podExecNamed(name: string): Promise<PodExec> {
  return aws.podExecNamed(name);
}

/**
 * The data mover's repository as its jobs name it: this deployment's bucket and prefix, wrapped
 * by the repository key; undefined where the stack gave no key (no data mover).
 */
export function dataMoverRepository(): RepositoryLocation | undefined {
  if (!env.LIFEBOAT_REPOSITORY_KEY) return undefined;
  return {
    bucket: env.LIFEBOAT_BUCKET,
    ...(env.LIFEBOAT_PREFIX ? { prefix: env.LIFEBOAT_PREFIX } : {}),
    region: env.AWS_REGION,
    kmsKeyId: env.LIFEBOAT_REPOSITORY_KEY,
  };
}

/** The repository restore jobs read (a DR deployment: the source's) and where they report. */
export function dataMoverRestoreRepository(): RestoreRepository | undefined {
  return restoreRepositoryOf(env);
}

/** CSI VolumeSnapshots on a cluster, by its name (through the same EKS access). */
export async function csiSnapshotsOf(name: string): Promise<CsiSnapshots> {
  return new KubernetesCsiSnapshots(await aws.clusterNamed(name));
}

/**
 * Renews the run's claim on its name at the start of a step: while steps run, its lease holds;
 * a run aborted or timed out as a whole stops renewing, and its name is then judged abandoned.
 * A run found dead meanwhile stops here with RunAbandoned (its failure already recorded).
 */
export function renewRun(
  kind: 'backup' | 'restore',
  run: { readonly name: string; readonly runId: string },
  signal?: AbortSignal,
): Promise<void> {
  const key = kind === 'backup' ? backupKeys(run.name).claim : restoreKeys(run.name).claim;
  return renewClaim({ store, key, runId: run.runId, clock, ...(signal ? { signal } : {}) });
}
