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
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Key } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { DataMover, type WorkflowDataMoverProps, workflowDataMover } from './data-mover.js';
import { HookRunner, type HookRunnerProps } from './hook-runner.js';
import { restoreVolumeFunctions } from './restore-volumes.js';
import { clusterAccess, grantStorage, ROOT, stepFunction, workflowStateMachine } from './step-function.js';

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
  readonly bucket: Bucket;
  readonly key: Key;
  /** EKS clusters this deployment may restore into, by name (same account and region). */
  readonly clusters: readonly string[];
  readonly prefix?: string;
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
  readonly clusterWriterRole: Role;
  /** Runs a recipe's restore hook steps whose commands may outlast a Lambda. */
  readonly hookRunner: HookRunner;
  readonly dataMover: DataMover;

  constructor(scope: Construct, id: string, props: RestoreWorkflowProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const stateMachineName = `${stack.stackName}-restore`;
    this.clusterWriterRole = new Role(this, 'ClusterWriterRole', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: 'Lifeboat functions that restore into Kubernetes clusters',
    });
    const environment = {
      LIFEBOAT_BUCKET: props.bucket.bucketName,
      LIFEBOAT_PREFIX: props.prefix ?? '',
      NODE_OPTIONS: '--enable-source-maps',
    };
    // Reads a resource-modifier ConfigMap from the target cluster, so it needs the cluster role.
    const validate = stepFunction(this, 'ValidateRestore', {
      memoryMb: 512,
      timeout: Duration.seconds(60),
      environment,
      role: this.clusterWriterRole,
    });
    const plan = stepFunction(this, 'PlanRestore', {
      memoryMb: 1769,
      timeout: Duration.minutes(15),
      environment,
      role: this.clusterWriterRole,
    });
    const phase = stepFunction(this, 'RestorePhase', {
      memoryMb: 1024,
      timeout: Duration.minutes(15),
      environment,
      role: this.clusterWriterRole,
    });
    // Runs exec hooks in restored pods (pods/exec through the apiserver) and reads them while
    // they wait: the cluster role. Re-entrant, so 15 minutes bound one invocation, not a wait.
    const hooks = stepFunction(this, 'RestoreHooks', {
      memoryMb: 512,
      timeout: Duration.minutes(15),
      environment,
      role: this.clusterWriterRole,
    });
    // A recipe's hook steps: lists pods and execs in them, waiting for them as RestoreHooks does.
    const recipeHook = stepFunction(this, 'RunRestoreRecipeHook', {
      memoryMb: 512,
      timeout: Duration.minutes(15),
      environment,
      role: this.clusterWriterRole,
    });
    const { restoreVolumes, patchVolumes } = restoreVolumeFunctions(this, {
      environment,
      clusterWriterRole: this.clusterWriterRole,
    });
    const finalize = stepFunction(this, 'FinalizeRestore', {
      memoryMb: 1024,
      timeout: Duration.minutes(15),
      environment,
    });
    // The Catch: records a restore that failed as a whole, with what it had done.
    const recordFailure = stepFunction(this, 'RecordRestoreFailure', {
      memoryMb: 1024,
      timeout: Duration.minutes(5),
      environment,
    });
    const stepFunctions = [
      validate,
      plan,
      restoreVolumes,
      phase,
      patchVolumes,
      hooks,
      recipeHook,
      finalize,
      recordFailure,
    ];
    grantStorage(this, {
      bucket: props.bucket,
      key: props.key,
      functions: stepFunctions,
      invokedByStateMachine: stepFunctions,
    });
    // A restore creates any kind of object, CRDs and RBAC included.
    clusterAccess(this, {
      role: this.clusterWriterRole,
      clusters: props.clusters,
      accessPolicy: 'AmazonEKSClusterAdminPolicy',
    });
    this.hookRunner = new HookRunner(this, 'HookRunner', {
      bucket: props.bucket,
      key: props.key,
      clusters: props.clusters,
      ...(props.prefix ? { prefix: props.prefix } : {}),
      ...(props.hookRunnerVpc ? { vpc: props.hookRunnerVpc } : {}),
    });
    this.dataMover =
      props.dataMover instanceof DataMover
        ? props.dataMover
        : workflowDataMover(this, {
            tasksBeside: this.hookRunner,
            bucket: props.bucket,
            storageKey: props.key,
            prefix: props.prefix,
            props: props.dataMover,
          });
    // RestoreVolumes names the repository in the jobs it hands out (it never opens it).
    restoreVolumes.addEnvironment('LIFEBOAT_REPOSITORY_KEY', this.dataMover.repositoryKey.keyArn);
    patchVolumes.addEnvironment('LIFEBOAT_REPOSITORY_KEY', this.dataMover.repositoryKey.keyArn);
    this.stateMachine = workflowStateMachine(this, {
      name: stateMachineName,
      definitionFile: RESTORE_DEFINITION_FILE,
      substitutions: restoreSubstitutions({
        validate,
        plan,
        restoreVolumes,
        phase,
        patchVolumes,
        hooks,
        recipeHook,
        finalize,
        recordFailure,
        hookRunner: this.hookRunner.substitutions(),
        dataMover: this.dataMover.substitutions(),
      }),
      invokes: stepFunctions,
    });
    this.hookRunner.grantRun(this.stateMachine);
    this.dataMover.grantRun(this.stateMachine);
  }
}
