/**
 * Schedules in AWS (docs/schedules.md): the stack's EventBridge Scheduler group, where the API
 * puts one Scheduler schedule per expression of each Schedule; the FireSchedule function those
 * schedules invoke (it starts the backup workflow, or records the skip); the CollectGarbage
 * function and the GC schedule that invokes it (hourly unless told otherwise), deleting expired
 * and unretained backups through the delete workflow. Scheduler invokes each target with a role
 * that may invoke only that target and send to the schedules' dead-letter queue; the API may
 * manage schedules in the group only, and pass only the FireSchedule role to Scheduler.
 * Neither function may delete an object: deletions are the delete workflow's.
 */
import { ArnFormat, Duration, Stack, Token, Validations } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { CfnSchedule, CfnScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import {
  GARBAGE_DRY_RUN_REPORT_KEY,
  GARBAGE_REPORT_KEY,
  SCHEDULES_DIR,
} from '../../shared/domain/storage/keys.js';
import { acknowledgeStepFunctions, stepFunction } from './step-function.js';
import type { BackupStore } from './storage-access.js';

const SCHEDULES_REASON =
  'Schedules are stored one object each under plugins/lifeboat/schedules/, named after the Schedule';

/** How long a trigger Scheduler or Lambda could not deliver is retried: Velero never catches up. */
const TRIGGER_AGE = Duration.hours(1);

export interface SchedulesProps {
  readonly store: BackupStore;
  readonly stateMachines: {
    readonly backup: StateMachine;
    readonly restore: StateMachine;
    readonly delete: StateMachine;
  };
  /** When garbage collection runs: an EventBridge Scheduler expression (default `rate(1 hour)`). */
  readonly garbageCollection?: { readonly expression: string; readonly timezone?: string };
  /** The DR drill workflow a Schedule's drill target starts at each firing (none: no drills). */
  readonly drillStateMachine?: StateMachine;
}

export class Schedules extends Construct {
  readonly group: CfnScheduleGroup;
  readonly fireSchedule: NodejsFunction;
  readonly collectGarbage: NodejsFunction;
  /** The role Scheduler invokes FireSchedule with (passed by the API when it puts a schedule). */
  readonly fireRole: Role;
  /** Triggers that could not be delivered, or whose function failed after its retries. */
  readonly deadLetters: Queue;
  readonly garbageSchedule: CfnSchedule;
  private readonly store: BackupStore;

  constructor(scope: Construct, id: string, props: SchedulesProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const { store, stateMachines } = props;
    this.store = store;
    this.group = new CfnScheduleGroup(this, 'Group', { name: `${stack.stackName}-schedules` });
    this.deadLetters = new Queue(this, 'TriggerDeadLetterQueue', {
      encryption: QueueEncryption.KMS,
      encryptionMasterKey: store.key,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    const environment = {
      LIFEBOAT_BUCKET: store.bucket.bucketName,
      LIFEBOAT_PREFIX: store.prefix,
      LIFEBOAT_BACKUP_STATE_MACHINE_ARN: stateMachines.backup.stateMachineArn,
      LIFEBOAT_RESTORE_STATE_MACHINE_ARN: stateMachines.restore.stateMachineArn,
      LIFEBOAT_DELETE_STATE_MACHINE_ARN: stateMachines.delete.stateMachineArn,
      NODE_OPTIONS: '--enable-source-maps',
    };
    this.fireSchedule = stepFunction(this, 'FireSchedule', {
      memoryMb: 256,
      timeout: Duration.seconds(60),
      environment,
      store,
      access: {},
    });
    this.grantObjects(this.fireSchedule, [`${SCHEDULES_DIR}*`]);
    stateMachines.backup.grantStartExecution(this.fireSchedule);
    this.grantDescribe(this.fireSchedule, ['backup']);
    if (props.drillStateMachine) this.grantDrills(props.drillStateMachine);
    this.collectGarbage = stepFunction(this, 'CollectGarbage', {
      memoryMb: 512,
      timeout: Duration.minutes(5),
      environment,
      store,
      access: { writes: ['deleteRequests'] },
    });
    this.grantObjects(this.collectGarbage, [GARBAGE_REPORT_KEY, GARBAGE_DRY_RUN_REPORT_KEY]);
    stateMachines.delete.grantStartExecution(this.collectGarbage);
    this.grantDescribe(this.collectGarbage, ['backup', 'delete']);
    for (const fn of [this.fireSchedule, this.collectGarbage])
      fn.configureAsyncInvoke({
        retryAttempts: 2,
        maxEventAge: TRIGGER_AGE,
        onFailure: new SqsDestination(this.deadLetters),
      });
    acknowledgeStepFunctions(this, { store, invokedByStateMachine: [] });
    this.fireRole = this.schedulerRole('FireScheduleSchedulerRole', this.fireSchedule);
    const garbageRole = this.schedulerRole('CollectGarbageSchedulerRole', this.collectGarbage);
    this.garbageSchedule = new CfnSchedule(this, 'CollectGarbageSchedule', {
      name: 'lifeboat-collect-garbage',
      groupName: this.group.ref,
      description: 'Lifeboat garbage collection: expired and unretained backups, through the delete workflow',
      scheduleExpression: props.garbageCollection?.expression ?? 'rate(1 hour)',
      scheduleExpressionTimezone: props.garbageCollection?.timezone ?? 'UTC',
      flexibleTimeWindow: { mode: 'OFF' },
      state: 'ENABLED',
      target: this.targetOf(this.collectGarbage, garbageRole, '{"dryRun":false}'),
    });
    this.acknowledge(stack);
  }

  /** What the API needs to manage Schedules: their group, FireSchedule and the role, as variables and grants. */
  grantManagement(api: NodejsFunction): void {
    const stack = Stack.of(this);
    api.addEnvironment('LIFEBOAT_SCHEDULE_GROUP', this.group.ref);
    api.addEnvironment('LIFEBOAT_SCHEDULE_TARGET_ARN', this.fireSchedule.functionArn);
    api.addEnvironment('LIFEBOAT_SCHEDULER_ROLE_ARN', this.fireRole.roleArn);
    api.addEnvironment('LIFEBOAT_SCHEDULE_DEAD_LETTER_ARN', this.deadLetters.queueArn);
    api.addToRolePolicy(
      new PolicyStatement({
        actions: [
          'scheduler:CreateSchedule',
          'scheduler:UpdateSchedule',
          'scheduler:DeleteSchedule',
          'scheduler:GetSchedule',
        ],
        resources: [
          stack.formatArn({
            service: 'scheduler',
            resource: 'schedule',
            resourceName: `${this.group.ref}/*`,
            arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
          }),
        ],
      }),
    );
    // ListSchedules has no resource-level permission; the adapter lists the group only.
    api.addToRolePolicy(new PolicyStatement({ actions: ['scheduler:ListSchedules'], resources: ['*'] }));
    api.addToRolePolicy(
      new PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [this.fireRole.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      }),
    );
    this.grantObjects(api, [`${SCHEDULES_DIR}*`, GARBAGE_DRY_RUN_REPORT_KEY], { deletes: true });
    const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
    const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
    const group = `<${stack.getLogicalId(this.group)}>`;
    const apiScope = Validations.of(api.node.scope as Construct);
    apiScope.acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:${region}:${account}:schedule/${group}/*]`,
      reason: "The API manages the Scheduler schedules of Schedules in the stack's own group only",
    });
    apiScope.acknowledge({ id: this.schedulesResourceId(), reason: SCHEDULES_REASON });
  }

  /** cdk-nag's name of the grant on every stored Schedule. */
  private schedulesResourceId(): string {
    const stack = Stack.of(this);
    const bucket = `<${stack.getLogicalId(this.store.bucket.node.defaultChild as never)}.Arn>`;
    return `AwsSolutions-IAM5[Resource::${bucket}/${this.store.prefix}${SCHEDULES_DIR}*]`;
  }

  /** Puts (and, for the API, deletes) the given keys of the store, encrypting with its key. */
  private grantObjects(fn: IFunction, keys: readonly string[], options: { deletes?: boolean } = {}): void {
    const { store } = this;
    const resources = keys.map((k) => store.bucket.arnForObjects(`${store.prefix}${k}`));
    fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:PutObject'], resources }));
    fn.addToRolePolicy(
      new PolicyStatement({ actions: ['kms:GenerateDataKey'], resources: [store.key.keyArn] }),
    );
    if (options.deletes)
      fn.addToRolePolicy(
        new PolicyStatement({ actions: ['s3:DeleteObject'], resources: resources.slice(0, 1) }),
      );
  }

  /** A Schedule's drill target: FireSchedule starts the drill workflow and sees whether a drill runs. */
  private grantDrills(drill: StateMachine): void {
    this.fireSchedule.addEnvironment('LIFEBOAT_DRILL_STATE_MACHINE_ARN', drill.stateMachineArn);
    drill.grantStartExecution(this.fireSchedule);
    this.grantDescribe(this.fireSchedule, ['drill']);
  }

  /** DescribeExecution on the named workflows' executions (by name: `<machine>:<execution>`). */
  private grantDescribe(fn: NodejsFunction, workflows: readonly string[]): void {
    const stack = Stack.of(this);
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ['states:DescribeExecution'],
        resources: workflows.map((w) =>
          stack.formatArn({
            service: 'states',
            resource: 'execution',
            resourceName: `${stack.stackName}-${w}:*`,
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        ),
      }),
    );
  }

  /** A role Scheduler assumes for this stack's group only, that may invoke one function. */
  private schedulerRole(id: string, target: NodejsFunction): Role {
    const stack = Stack.of(this);
    const role = new Role(this, id, {
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnLike: { 'aws:SourceArn': this.group.attrArn },
        },
      }),
      description: `Lifeboat: EventBridge Scheduler invokes ${target.node.id}`,
    });
    role.addToPolicy(
      new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [target.functionArn] }),
    );
    this.deadLetters.grantSendMessages(role);
    return role;
  }

  private targetOf(fn: NodejsFunction, role: Role, input: string): CfnSchedule.TargetProperty {
    return {
      arn: fn.functionArn,
      roleArn: role.roleArn,
      input,
      retryPolicy: { maximumEventAgeInSeconds: TRIGGER_AGE.toSeconds(), maximumRetryAttempts: 10 },
      deadLetterConfig: { arn: this.deadLetters.queueArn },
    };
  }

  private acknowledge(stack: Stack): void {
    const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
    const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
    const acknowledge = (id: string, reason: string) => Validations.of(this).acknowledge({ id, reason });
    for (const w of ['backup', 'delete', 'drill'])
      acknowledge(
        `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:${region}:${account}:execution:${stack.stackName}-${w}:*]`,
        `Schedules look up the ${w} workflow's executions, named after the backups or drills they start or delete`,
      );
    acknowledge(this.schedulesResourceId(), SCHEDULES_REASON);
    acknowledge(
      'AwsSolutions-SQS3',
      'The trigger dead-letter queue is itself the dead-letter queue of Scheduler and of the functions’ async invocations',
    );
  }
}
