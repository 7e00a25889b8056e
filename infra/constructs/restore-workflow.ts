/**
 * The restore workflow: its step functions and the state machine built from
 * statemachines/restore.asl.json with typed substitutions. The functions that write into
 * clusters share a role with an EKS access entry on each cluster named. A recipe's hook steps
 * longer than a Lambda run in a hook runner of its own (a Fargate task, infra/constructs/
 * hook-runner.ts), and volumes whose data is in the data mover's repository are written by the
 * data mover (the backup workflow's, or one of its own). Deployable on its own in a DR account,
 * reading backups from a bucket it is granted.
 */
import { join } from 'node:path';
import { Duration, Stack } from 'aws-cdk-lib';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { DataMover, type WorkflowDataMoverProps, workflowDataMover } from './data-mover.js';
import { grantDrSourceRepositoryRead } from './dr-source-repository.js';
import { HOOK_EXEC_GROUP, HookRunner, type HookRunnerProps } from './hook-runner.js';
import { restoreVolumeFunctions } from './restore-volumes.js';
import {
  acknowledgeStepFunctions,
  ROOT,
  type StepFunctionOptions,
  stepFunction,
  workflowStateMachine,
} from './step-function.js';
import type { BackupStore, StorageAccess } from './storage-access.js';

export const RESTORE_DEFINITION_FILE = join(ROOT, 'statemachines', 'restore.asl.json');

export function restoreSubstitutions(functions: {
  validate: IFunction;
  plan: IFunction;
  restoreVolumes: IFunction;
  patchVolumes: IFunction;
  phase: IFunction;
  hooks: IFunction;
  recipeHook: IFunction;
  finalize: IFunction;
  recordFailure: IFunction;
  /** The hook runner's `${HookRunner…}` values (HookRunner.substitutions()). */
  hookRunner: Record<string, string>;
  /** The data mover's `${DataMover…}` values (DataMover.substitutions()). */
  dataMover: Record<string, string>;
}): Record<string, string> {
  return {
    ...functions.hookRunner,
    ...functions.dataMover,
    ValidateRestoreFunctionArn: functions.validate.functionArn,
    PlanRestoreFunctionArn: functions.plan.functionArn,
    RestoreVolumesFunctionArn: functions.restoreVolumes.functionArn,
    PatchProvisionedVolumesFunctionArn: functions.patchVolumes.functionArn,
    RestorePhaseFunctionArn: functions.phase.functionArn,
    RestoreHooksFunctionArn: functions.hooks.functionArn,
    RunRestoreRecipeHookFunctionArn: functions.recipeHook.functionArn,
    FinalizeRestoreFunctionArn: functions.finalize.functionArn,
    RecordRestoreFailureFunctionArn: functions.recordFailure.functionArn,
  };
}

export interface RestoreWorkflowProps {
  /** The backup storage: bucket, key, location prefix, Object Lock mode. */
  readonly store: BackupStore;
  /** EKS clusters this deployment may restore into, by name (same account and region). */
  readonly clusters: readonly string[];
  /** Where hook runner tasks run (see HookRunnerProps). */
  readonly hookRunnerVpc?: HookRunnerProps['vpc'];
  /**
   * The data mover that writes volumes from its repository: the backup workflow's, in a stack
   * with both; else one of its own in this workflow's hook runner cluster, with these options.
   */
  readonly dataMover?: DataMover | WorkflowDataMoverProps;
}

export class RestoreWorkflow extends Construct {
  readonly stateMachine: StateMachine;
  /** Runs a recipe's restore hook steps whose commands may outlast a Lambda. */
  readonly hookRunner: HookRunner;
  readonly dataMover: DataMover;

  constructor(scope: Construct, id: string, props: RestoreWorkflowProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const { store, clusters } = props;
    const stateMachineName = `${stack.stackName}-restore`;
    const environment = {
      LIFEBOAT_BUCKET: store.bucket.bucketName,
      LIFEBOAT_PREFIX: store.prefix,
      NODE_OPTIONS: '--enable-source-maps',
    };
    const fn = (name: string, options: Omit<StepFunctionOptions, 'environment' | 'store'>) =>
      stepFunction(this, name, { ...options, environment, store });
    // Every step renews its run's claim on the restore's name (a lease), and writes its working data.
    const work: StorageAccess = { writes: ['restoreWork', 'restoreClaims'] };
    const reads = { clusters, accessPolicy: 'AmazonEKSAdminViewPolicy' } as const;
    const execs = { clusters, kubernetesGroups: [HOOK_EXEC_GROUP] };
    const minutes = Duration.minutes;
    // Reads resource-modifier and recipe ConfigMaps from the target cluster; claims the name.
    const validate = fn('ValidateRestore', {
      memoryMb: 512,
      timeout: Duration.seconds(60),
      access: { writes: ['restoreClaims', 'restoreWork'] },
      cluster: reads,
    });
    // Compares the backup with what the target cluster holds.
    const plan = fn('PlanRestore', { memoryMb: 1769, timeout: minutes(15), access: work, cluster: reads });
    // The one step that writes into the cluster: any kind of object, CRDs and RBAC included.
    const phase = fn('RestorePhase', {
      memoryMb: 1024,
      timeout: minutes(15),
      access: work,
      cluster: { clusters, accessPolicy: 'AmazonEKSClusterAdminPolicy' },
    });
    // Runs exec hooks in restored pods and reads them while they wait. Re-entrant, so 15
    // minutes bound one invocation, not a wait.
    const hooks = fn('RestoreHooks', { memoryMb: 512, timeout: minutes(15), access: work, cluster: execs });
    // A recipe's hook steps: lists pods and execs in them, waiting for them as RestoreHooks does.
    const recipeHook = fn('RunRestoreRecipeHook', {
      memoryMb: 512,
      timeout: minutes(15),
      access: work,
      cluster: execs,
    });
    const { restoreVolumes, patchVolumes } = restoreVolumeFunctions(this, { environment, store, clusters });
    // The restore's files and Lifeboat's record of it; then its run's working data goes.
    const finalize = fn('FinalizeRestore', {
      memoryMb: 1024,
      timeout: minutes(15),
      access: { writes: ['restores', 'restoreRecords', 'restoreClaims'], deletes: ['restoreWork'] },
    });
    // The Catch: records a restore that failed as a whole, with what it had done.
    const recordFailure = fn('RecordRestoreFailure', {
      memoryMb: 1024,
      timeout: minutes(5),
      access: { writes: ['restores', 'restoreRecords'], deletes: ['restoreWork'] },
    });
    const steps = {
      validate,
      plan,
      restoreVolumes,
      phase,
      patchVolumes,
      hooks,
      recipeHook,
      finalize,
      recordFailure,
    };
    const invoked = Object.values(steps);
    acknowledgeStepFunctions(this, { store, invokedByStateMachine: invoked });
    this.hookRunner = new HookRunner(this, 'HookRunner', {
      store,
      writes: ['restoreWork', 'restoreClaims'],
      kubernetesGroups: [HOOK_EXEC_GROUP],
      clusters,
      ...(props.hookRunnerVpc ? { vpc: props.hookRunnerVpc } : {}),
    });
    this.dataMover =
      props.dataMover instanceof DataMover
        ? props.dataMover
        : workflowDataMover(this, {
            tasksBeside: this.hookRunner,
            bucket: store.bucket,
            storageKey: store.key,
            prefix: store.prefix,
            props: props.dataMover,
          });
    // RestoreVolumes names the repository in the jobs it hands out (it never opens it).
    restoreVolumes.addEnvironment('LIFEBOAT_REPOSITORY_KEY', this.dataMover.repositoryKey.keyArn);
    patchVolumes.addEnvironment('LIFEBOAT_REPOSITORY_KEY', this.dataMover.repositoryKey.keyArn);
    // A DR deployment's restore jobs name the source's repository (its key given): read only.
    if (store.drSource)
      grantDrSourceRepositoryRead({ role: this.dataMover.taskRole, source: store.drSource });
    this.stateMachine = workflowStateMachine(this, {
      name: stateMachineName,
      definitionFile: RESTORE_DEFINITION_FILE,
      substitutions: restoreSubstitutions({
        ...steps,
        hookRunner: this.hookRunner.substitutions(),
        dataMover: this.dataMover.substitutions(),
      }),
      invokes: invoked,
      logKey: store.key,
    });
    this.hookRunner.grantRun(this.stateMachine);
    this.dataMover.grantRun(this.stateMachine);
  }
}
