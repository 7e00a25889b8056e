/**
 * The hook runner's container entry: the Fargate task the LongHookBlocks stage starts with
 * `ecs:runTask.sync` (image: functions/common/fargate-task.Dockerfile) for a long ItemBlock or a long recipe hook
 * step of a backup (RunLongRecipeHook) or a restore (RunLongRestoreRecipeHook), and, under
 * `lifeboat --local`, a child
 * process started the same way with the same environment. Reads its input from
 * `LIFEBOAT_HOOK_RUN`, its store and cluster from the environment:
 * - in AWS: `LIFEBOAT_BUCKET`/`LIFEBOAT_PREFIX` (S3) and the run's cluster by name (EKS token);
 * - locally: `LIFEBOAT_STORE_DIR` (a directory store) and `LIFEBOAT_KUBECONFIG` (a kubeconfig file).
 * Exits 0 when the block's result is written (hook failures are in it), 1 otherwise, with the
 * reason on stderr. Never prints a hook's output: that goes into the backup log only.
 */
import * as z from 'zod';
import { awsAdapters } from '../../shared/adapters/aws-adapters.js';
import { clusterFromKubeconfig } from '../../shared/adapters/kubernetes-cluster.js';
import { KubernetesCsiSnapshots } from '../../shared/adapters/kubernetes-csi-snapshots.js';
import { KubernetesPodExec } from '../../shared/adapters/kubernetes-pod-exec.js';
import { LocalDirectoryStore } from '../../shared/adapters/local-directory-store.js';
import { systemClock } from '../../shared/adapters/system-clock.js';
import { HOOK_RUN_VARIABLE, hookRunInput } from '../../shared/contracts/hook-run.js';
import { RecipeStepFailed } from '../../shared/domain/errors.js';
import { backupKeys, restoreKeys } from '../../shared/domain/storage/keys.js';
import type { Cluster, ClusterWriter } from '../../shared/ports/cluster.js';
import type { CsiSnapshots } from '../../shared/ports/csi-snapshots.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { PodExec } from '../../shared/ports/pod-exec.js';
import type { Snapshotter } from '../../shared/ports/snapshotter.js';
import { DEFAULT_CLAIM_LEASE_SECONDS, keepClaimAlive } from '../common/name-claim.js';
import { runRecipeHook } from '../run-recipe-hook/run-recipe-hook.js';
import { runDeferredBlock } from './hook-runner.js';
import { runLongRestoreRecipeHook } from './restore-recipe-hook.js';

const runnerEnv = z.object({
  [HOOK_RUN_VARIABLE]: z.string().min(1),
  LIFEBOAT_STORE_DIR: z.string().min(1).optional(),
  LIFEBOAT_KUBECONFIG: z.string().min(1).optional(),
  LIFEBOAT_BUCKET: z.string().min(1).optional(),
  LIFEBOAT_PREFIX: z.string().default(''),
  LIFEBOAT_S3_FORCE_PATH_STYLE: z.enum(['true', 'false']).default('false'),
  AWS_REGION: z.string().min(1).optional(),
});

async function adapters(env: z.infer<typeof runnerEnv>): Promise<{
  store: ObjectStore;
  podExecFor: (cluster: string) => Promise<PodExec>;
  clusterFor: (cluster: string) => Promise<Cluster & ClusterWriter>;
  snapshotter?: Snapshotter;
  csiFor?: (cluster: string) => Promise<CsiSnapshots>;
}> {
  const aws =
    env.LIFEBOAT_BUCKET && env.AWS_REGION
      ? awsAdapters({
          region: env.AWS_REGION,
          bucket: env.LIFEBOAT_BUCKET,
          prefix: env.LIFEBOAT_PREFIX,
          forcePathStyle: env.LIFEBOAT_S3_FORCE_PATH_STYLE === 'true',
        })
      : undefined;
  const store = env.LIFEBOAT_STORE_DIR ? new LocalDirectoryStore(env.LIFEBOAT_STORE_DIR) : aws?.store;
  if (!store) throw new Error('set LIFEBOAT_STORE_DIR, or LIFEBOAT_BUCKET and AWS_REGION');
  const kubeconfig = env.LIFEBOAT_KUBECONFIG;
  if (kubeconfig) {
    const cluster = await clusterFromKubeconfig({ path: kubeconfig });
    const podExec = new KubernetesPodExec(cluster.kubeConfig);
    const csi = new KubernetesCsiSnapshots(cluster);
    return {
      store,
      podExecFor: async () => podExec,
      clusterFor: async () => cluster,
      csiFor: async () => csi,
      // Native EBS snapshots from a local run need EC2: only with the AWS variables.
      ...(aws ? { snapshotter: aws.snapshotter() } : {}),
    };
  }
  if (!aws) throw new Error('set LIFEBOAT_KUBECONFIG, or LIFEBOAT_BUCKET and AWS_REGION to reach EKS');
  return {
    store,
    podExecFor: (cluster) => aws.podExecNamed(cluster),
    clusterFor: (cluster) => aws.clusterNamed(cluster),
    snapshotter: aws.snapshotter(),
    csiFor: async (cluster) => new KubernetesCsiSnapshots(await aws.clusterNamed(cluster)),
  };
}

export async function main(source: NodeJS.ProcessEnv = process.env): Promise<number> {
  try {
    const env = runnerEnv.parse(source);
    const input = hookRunInput.parse(JSON.parse(env[HOOK_RUN_VARIABLE]));
    const deps = await adapters(env);
    // Hooks may run for hours with no Lambda step renewing the run's claim: this task does.
    const run = 'restore' in input ? input.restore : input.run;
    keepClaimAlive({
      store: deps.store,
      key: 'restore' in input ? restoreKeys(run.name).claim : backupKeys(run.name).claim,
      runId: run.runId,
      clock: systemClock,
      leaseSeconds: DEFAULT_CLAIM_LEASE_SECONDS,
    });
    if ('restore' in input) {
      const cluster = await deps.clusterFor(input.restore.cluster);
      const outcome = await runLongRestoreRecipeHook(
        { run: input.restore, step: input.step },
        {
          store: deps.store,
          cluster,
          podExec: await deps.podExecFor(input.restore.cluster),
          clock: systemClock,
        },
      );
      process.stdout.write(`${JSON.stringify(outcome)}\n`);
    } else if ('block' in input) {
      const result = await runDeferredBlock(input, { ...deps, clock: systemClock });
      // One line for the task's log: counts only, never the hooks' output.
      process.stdout.write(
        `${JSON.stringify({ block: input.block, items: result.items.length, hooks: result.hooks ?? null })}\n`,
      );
    } else {
      // The step's verdict (RecipeStepFailed) is read from its result by RunRecipeHook afterwards.
      const outcome = await runRecipeHook(input, {
        ...deps,
        cluster: await deps.clusterFor(input.run.cluster),
        clock: systemClock,
      }).catch((error: unknown) => {
        if (error instanceof RecipeStepFailed) return { stopped: error.message };
        throw error;
      });
      process.stdout.write(`${JSON.stringify({ step: input.step.index, ...outcome })}\n`);
    }
    return 0;
  } catch (error) {
    process.stderr.write(`hook runner failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

// Exits once done: an idle keep-alive connection must not keep a finished task running.
process.exit(await main());
