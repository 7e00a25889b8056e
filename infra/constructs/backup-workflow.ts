/**
 * The backup workflow: the functions of each state, the ItemBlock queue with its dead-letter
 * queue and their consumers, and the state machine built from statemachines/backup.asl.json
 * with typed substitutions, and the data mover its MoveVolumeData stage runs (in the hook
 * runner's cluster). Clusters are given by name. Each function has a role of its own with what its
 * step needs: the storage areas it writes, the EKS access it uses. Never grants more.
 */
import { join } from 'node:path';
import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import { PolicyStatement, type Role } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { backupRecipeFunctions, type RecipeFunctions, recipeSubstitutions } from './backup-recipe.js';
import { backupVolumeFunctions, grantEbsSnapshots, VOLUME_SNAPSHOT_GROUP } from './backup-volumes.js';
import { type DataMover, type WorkflowDataMoverProps, workflowDataMover } from './data-mover.js';
import { HOOK_EXEC_GROUP, HookRunner, type HookRunnerProps } from './hook-runner.js';
import {
  acknowledgeStepFunctions,
  ROOT,
  type StepFunctionOptions,
  stepFunction,
  workflowStateMachine,
} from './step-function.js';
import type { BackupStore, StorageAccess } from './storage-access.js';

export const BACKUP_DEFINITION_FILE = join(ROOT, 'statemachines', 'backup.asl.json');

/** The `${…}` placeholders of the backup state machine and what fills each. */
export function backupSubstitutions(functions: {
  validate: IFunction;
  collect: IFunction;
  finalize: IFunction;
  recordFailure: IFunction;
  volumeOperations: IFunction;
  /** The hook runner's `${HookRunner…}` values (HookRunner.substitutions()). */
  hookRunner: Record<string, string>;
  /** The data mover's `${DataMover…}` values (DataMover.substitutions()). */
  dataMover: Record<string, string>;
  recipe: RecipeFunctions<IFunction>;
}): Record<string, string> {
  return {
    ...functions.hookRunner,
    ...functions.dataMover,
    ...recipeSubstitutions(functions.recipe),
    ValidateBackupFunctionArn: functions.validate.functionArn,
    CollectItemsFunctionArn: functions.collect.functionArn,
    VolumeOperationsFunctionArn: functions.volumeOperations.functionArn,
    FinalizeBackupFunctionArn: functions.finalize.functionArn,
    RecordBackupFailureFunctionArn: functions.recordFailure.functionArn,
  };
}

export interface BackupWorkflowProps {
  /** The backup storage: bucket, key, location prefix, Object Lock mode. */
  readonly store: BackupStore;
  /** EKS clusters Lambdas may back up, by name (same account and region). */
  readonly clusters: readonly string[];
  readonly itemBlocksTimeout?: Duration;
  /** How long a worker runs one message's hooks before leaving its blocks to the hook runner. */
  readonly inlineHookLimit?: Duration;
  /** Where hook runner tasks run (see HookRunnerProps). */
  readonly hookRunnerVpc?: HookRunnerProps['vpc'];
  /** The data mover's options; it runs in the hook runner's cluster and subnets. */
  readonly dataMover?: WorkflowDataMoverProps;
}

export class BackupWorkflow extends Construct {
  readonly stateMachine: StateMachine;
  readonly queue: Queue;
  readonly deadLetters: Queue;
  readonly hookRunner: HookRunner;
  /** Moves snapshotMoveData and fs-backup volumes into the repository (Fargate task). */
  readonly dataMover: DataMover;

  constructor(scope: Construct, id: string, props: BackupWorkflowProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const { store } = props;
    const stateMachineName = `${stack.stackName}-backup`;
    const stateMachineArn = stack.formatArn({
      service: 'states',
      resource: 'stateMachine',
      resourceName: stateMachineName,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    this.deadLetters = new Queue(this, 'ItemBlockDeadLetterQueue', {
      // An event source queue's messages stay hidden past its consumer's timeout (ItemBlockDeadLetters:
      // one minute): six times it, as Lambda advises, so a batch is never handled twice at once.
      visibilityTimeout: Duration.minutes(6),
      encryption: QueueEncryption.KMS,
      encryptionMasterKey: store.key,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.queue = new Queue(this, 'ItemBlockQueue', {
      encryption: QueueEncryption.KMS,
      encryptionMasterKey: store.key,
      enforceSSL: true,
      // Past the worker's own timeout, as Lambda requires of an event source queue.
      visibilityTimeout: Duration.minutes(16),
      deadLetterQueue: { queue: this.deadLetters, maxReceiveCount: 3 },
    });
    const environment = {
      LIFEBOAT_BUCKET: store.bucket.bucketName,
      LIFEBOAT_PREFIX: store.prefix,
      ITEM_BLOCK_QUEUE_URL: this.queue.queueUrl,
      ITEM_BLOCKS_TIMEOUT_SECONDS: String((props.itemBlocksTimeout ?? Duration.hours(1)).toSeconds()),
      LIFEBOAT_INLINE_HOOK_LIMIT_SECONDS: String((props.inlineHookLimit ?? Duration.minutes(10)).toSeconds()),
      NODE_OPTIONS: '--enable-source-maps',
    };
    const fn = (name: string, options: Omit<StepFunctionOptions, 'environment' | 'store'>) =>
      stepFunction(this, name, { ...options, environment, store });
    const { clusters } = props;
    const reads = { clusters, accessPolicy: 'AmazonEKSAdminViewPolicy' } as const;
    // Every step renews its run's claim on the backup's name (a lease), and writes its working data.
    const work: StorageAccess = { writes: ['backupWork', 'backupClaims'] };
    const minutes = Duration.minutes;
    // Reads a resource policy ConfigMap from the cluster and claims the backup's name.
    const validate = fn('ValidateBackup', {
      memoryMb: 512,
      timeout: Duration.seconds(30),
      access: { writes: ['backupClaims', 'backupWork'] },
      cluster: reads,
    });
    const collect = fn('CollectItems', {
      memoryMb: 1024,
      timeout: minutes(15),
      access: work,
      cluster: reads,
    });
    // Hooks run in the worker up to the inline limit (10 min by default); longer ones go to the
    // hook runner. EKS has no access policy for exec alone, nor for CSI snapshots: groups the
    // cluster's RBAC binds (infra/kubernetes/rbac.yaml).
    const worker = fn('BackupItemBlock', {
      memoryMb: 1024,
      timeout: minutes(15),
      access: work,
      cluster: { ...reads, kubernetesGroups: [HOOK_EXEC_GROUP, VOLUME_SNAPSHOT_GROUP] },
    });
    const deadLetterFn = fn('ItemBlockDeadLetters', {
      memoryMb: 512,
      timeout: minutes(1),
      access: { writes: ['backupWork'] },
    });
    // The backup's own files, velero-backup.json last; then its run's working data goes.
    const backupFiles: StorageAccess = { writes: ['backups'], deletes: ['backupWork'] };
    // Finalizing renews the run's claim first: a long finalize must not look abandoned.
    const finalize = fn('FinalizeBackup', {
      memoryMb: 1769,
      timeout: minutes(15),
      access: { ...backupFiles, writes: ['backups', 'backupClaims'] },
    });
    const recordFailure = fn('RecordBackupFailure', {
      memoryMb: 512,
      timeout: minutes(1),
      access: backupFiles,
    });
    const { volumeOperations } = backupVolumeFunctions(this, { environment, store, clusters });
    const recipe = backupRecipeFunctions(this, { environment, store, clusters });
    const recipeFunctions = [recipe.collect, recipe.group, recipe.hook];
    const invoked = [validate, collect, volumeOperations, finalize, recordFailure, ...recipeFunctions];
    acknowledgeStepFunctions(this, { store, invokedByStateMachine: invoked });
    this.queue.grantSendMessages(collect);
    this.queue.grantSendMessages(recipe.group);
    worker.addEventSource(new SqsEventSource(this.queue, { batchSize: 5, reportBatchItemFailures: true }));
    deadLetterFn.addEventSource(
      new SqsEventSource(this.deadLetters, { batchSize: 5, reportBatchItemFailures: true }),
    );
    const callback = new PolicyStatement({
      actions: ['states:SendTaskSuccess', 'states:SendTaskFailure'],
      resources: [stateMachineArn],
    });
    for (const f of [collect, worker, deadLetterFn, recipe.group]) f.addToRolePolicy(callback);
    grantEbsSnapshots(worker.role as Role);
    this.hookRunner = new HookRunner(this, 'HookRunner', {
      store,
      writes: ['backupWork', 'backupClaims'],
      // It backs up whole blocks, as a worker: their pods' hooks and their volumes' CSI snapshots.
      kubernetesGroups: [HOOK_EXEC_GROUP, VOLUME_SNAPSHOT_GROUP],
      clusters,
      ...(props.hookRunnerVpc ? { vpc: props.hookRunnerVpc } : {}),
    });
    // The runner backs up whole blocks, volumes included, as a worker would.
    grantEbsSnapshots(this.hookRunner.taskRole);
    this.dataMover = workflowDataMover(this, {
      tasksBeside: this.hookRunner,
      bucket: store.bucket,
      storageKey: store.key,
      prefix: store.prefix,
      props: props.dataMover,
    });
    // VolumeOperations names the repository in the jobs it hands out (it never opens it).
    volumeOperations.addEnvironment('LIFEBOAT_REPOSITORY_KEY', this.dataMover.repositoryKey.keyArn);
    this.stateMachine = workflowStateMachine(this, {
      name: stateMachineName,
      definitionFile: BACKUP_DEFINITION_FILE,
      substitutions: backupSubstitutions({
        validate,
        collect,
        finalize,
        recordFailure,
        volumeOperations,
        hookRunner: this.hookRunner.substitutions(),
        dataMover: this.dataMover.substitutions(),
        recipe,
      }),
      invokes: invoked,
      logKey: store.key,
    });
    this.hookRunner.grantRun(this.stateMachine);
    this.dataMover.grantRun(this.stateMachine);
  }
}
