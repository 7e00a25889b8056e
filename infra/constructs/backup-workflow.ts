/**
 * The backup workflow: the functions of each state, the ItemBlock queue with its dead-letter
 * queue and their consumers, and the state machine built from statemachines/backup.asl.json
 * with typed substitutions, and the data mover its MoveVolumeData stage runs (in the hook
 * runner's cluster). Clusters are given by name; the reading functions' role gets an EKS access
 * entry on each. Never grants more than the steps need.
 */
import { join } from 'node:path';
import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Key } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { backupRecipeFunctions, type RecipeFunctions, recipeSubstitutions } from './backup-recipe.js';
import {
  backupVolumeFunctions,
  grantEbsSnapshots,
  grantIncrementalBaseDeletion,
  VOLUME_SNAPSHOT_GROUP,
} from './backup-volumes.js';
import { type DataMover, type WorkflowDataMoverProps, workflowDataMover } from './data-mover.js';
import { HOOK_EXEC_GROUP, HookRunner, type HookRunnerProps } from './hook-runner.js';
import { clusterAccess, grantStorage, ROOT, stepFunction, workflowStateMachine } from './step-function.js';

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
  readonly bucket: Bucket;
  readonly key: Key;
  /** EKS clusters Lambdas may back up, by name (same account and region). */
  readonly clusters: readonly string[];
  readonly prefix?: string;
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
  readonly clusterReaderRole: Role;
  readonly hookRunner: HookRunner;
  /** Moves snapshotMoveData and fs-backup volumes into the repository (Fargate task). */
  readonly dataMover: DataMover;

  constructor(scope: Construct, id: string, props: BackupWorkflowProps) {
    super(scope, id);
    const stack = Stack.of(this);
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
      encryptionMasterKey: props.key,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.queue = new Queue(this, 'ItemBlockQueue', {
      encryption: QueueEncryption.KMS,
      encryptionMasterKey: props.key,
      enforceSSL: true,
      // Past the worker's own timeout, as Lambda requires of an event source queue.
      visibilityTimeout: Duration.minutes(16),
      deadLetterQueue: { queue: this.deadLetters, maxReceiveCount: 3 },
    });

    this.clusterReaderRole = new Role(this, 'ClusterReaderRole', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: 'Lifeboat functions that read Kubernetes clusters',
    });

    const environment = {
      LIFEBOAT_BUCKET: props.bucket.bucketName,
      LIFEBOAT_PREFIX: props.prefix ?? '',
      ITEM_BLOCK_QUEUE_URL: this.queue.queueUrl,
      ITEM_BLOCKS_TIMEOUT_SECONDS: String((props.itemBlocksTimeout ?? Duration.hours(1)).toSeconds()),
      LIFEBOAT_INLINE_HOOK_LIMIT_SECONDS: String((props.inlineHookLimit ?? Duration.minutes(10)).toSeconds()),
      NODE_OPTIONS: '--enable-source-maps',
    };
    const fn = (name: string, options: { memoryMb: number; timeout: Duration; role?: Role }) =>
      stepFunction(this, name, { ...options, environment });
    // Reads a resource policy ConfigMap from the cluster.
    const validate = fn('ValidateBackup', {
      memoryMb: 512,
      timeout: Duration.seconds(30),
      role: this.clusterReaderRole,
    });
    const collect = fn('CollectItems', {
      memoryMb: 1024,
      timeout: Duration.minutes(15),
      role: this.clusterReaderRole,
    });
    // Hooks run in the worker up to the inline limit (10 min by default); longer ones go to the hook runner.
    const worker = fn('BackupItemBlock', {
      memoryMb: 1024,
      timeout: Duration.minutes(15),
      role: this.clusterReaderRole,
    });
    const deadLetterFn = fn('ItemBlockDeadLetters', { memoryMb: 512, timeout: Duration.minutes(1) });
    const finalize = fn('FinalizeBackup', { memoryMb: 1769, timeout: Duration.minutes(15) });
    const recordFailure = fn('RecordBackupFailure', { memoryMb: 512, timeout: Duration.minutes(1) });
    const { volumeOperations } = backupVolumeFunctions(this, {
      environment,
      clusterReaderRole: this.clusterReaderRole,
    });
    const recipe = backupRecipeFunctions(this, { environment, clusterReaderRole: this.clusterReaderRole });
    const recipeFunctions = [recipe.collect, recipe.group, recipe.hook];

    grantStorage(this, {
      bucket: props.bucket,
      key: props.key,
      functions: [
        validate,
        collect,
        worker,
        deadLetterFn,
        volumeOperations,
        finalize,
        recordFailure,
        ...recipeFunctions,
      ],
      invokedByStateMachine: [
        validate,
        collect,
        volumeOperations,
        finalize,
        recordFailure,
        ...recipeFunctions,
      ],
    });
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
    clusterAccess(this, {
      role: this.clusterReaderRole,
      clusters: props.clusters,
      accessPolicy: 'AmazonEKSAdminViewPolicy',
      // Workers exec hooks into pods: EKS has no access policy for exec alone, so a group the
      // cluster's RBAC binds to pods/exec (docs/backup-hooks.md). Likewise CSI snapshots: a group
      // bound to create VolumeSnapshots and retain their contents (docs/backup-volumes.md).
      kubernetesGroups: [HOOK_EXEC_GROUP, VOLUME_SNAPSHOT_GROUP],
    });
    this.hookRunner = new HookRunner(this, 'HookRunner', {
      bucket: props.bucket,
      key: props.key,
      clusters: props.clusters,
      ...(props.prefix ? { prefix: props.prefix } : {}),
      ...(props.hookRunnerVpc ? { vpc: props.hookRunnerVpc } : {}),
    });
    // The runner backs up whole blocks, volumes included, as a worker would.
    grantEbsSnapshots(this.hookRunner.taskRole);
    this.dataMover = workflowDataMover(this, {
      tasksBeside: this.hookRunner,
      bucket: props.bucket,
      storageKey: props.key,
      prefix: props.prefix,
      props: props.dataMover,
    });
    // VolumeOperations names the repository in the jobs it hands out (it never opens it).
    volumeOperations.addEnvironment('LIFEBOAT_REPOSITORY_KEY', this.dataMover.repositoryKey.keyArn);
    grantIncrementalBaseDeletion(this.clusterReaderRole);
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
      invokes: [validate, collect, volumeOperations, finalize, recordFailure, ...recipeFunctions],
    });
    this.hookRunner.grantRun(this.stateMachine);
    this.dataMover.grantRun(this.stateMachine);
  }
}
