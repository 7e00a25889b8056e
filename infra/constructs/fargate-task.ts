/**
 * What every Fargate task a state machine starts with `ecs:runTask.sync` needs (the hook runner,
 * the data mover): an ARM64 task definition whose one container is built from
 * `functions/common/fargate-task.Dockerfile` with TASK=<name> (read-only root, logs kept a month); the
 * state machine's right to run exactly that task definition in exactly that
 * cluster, stop and describe its tasks, pass its two roles and keep the managed rule through
 * which Step Functions learns a task stopped; and the `${<Prefix>…}` placeholder values of its
 * RunTask state. Never grants RunTask on another task definition.
 */
import { type Duration, IgnoreMode, Stack, Token, Validations } from 'aws-cdk-lib';
import { Platform } from 'aws-cdk-lib/aws-ecr-assets';
import {
  ContainerImage,
  CpuArchitecture,
  FargateTaskDefinition,
  type ICluster,
  LogDrivers,
  OperatingSystemFamily,
  type TaskDefinition,
} from 'aws-cdk-lib/aws-ecs';
import { type IRole, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import { ROOT } from './step-function.js';

/** The task definition (`Task`) and its log group (`Logs`) in `scope`; the container is named `name`. */
export function arm64TaskDefinition(
  scope: Construct,
  options: {
    /** The container's name, its folder under functions/ (with its main.ts) and its log prefix. */
    name: string;
    /** The task's log group, `/ecs/<stack>-<logName>`: unique per task definition (default: name). */
    logName?: string;
    cpu: number;
    memoryLimitMiB: number;
    taskRole: IRole;
    environment: Record<string, string>;
    stopTimeout?: Duration;
    /** Encrypts the task's log group. */
    logKey: IKey;
  },
): FargateTaskDefinition {
  const stack = Stack.of(scope);
  const taskDefinition = new FargateTaskDefinition(scope, 'Task', {
    cpu: options.cpu,
    memoryLimitMiB: options.memoryLimitMiB,
    runtimePlatform: {
      cpuArchitecture: CpuArchitecture.ARM64,
      operatingSystemFamily: OperatingSystemFamily.LINUX,
    },
    taskRole: options.taskRole,
  });
  const logGroup = new LogGroup(scope, 'Logs', {
    logGroupName: `/ecs/${stack.stackName}-${options.logName ?? options.name}`,
    retention: RetentionDays.ONE_MONTH,
    encryptionKey: options.logKey,
  });
  taskDefinition.addContainer(options.name, {
    image: ContainerImage.fromAsset(ROOT, {
      // One image recipe for every task, its entry point chosen by the build argument.
      file: 'functions/common/fargate-task.Dockerfile',
      buildArgs: { TASK: options.name },
      platform: Platform.LINUX_ARM64,
      // Only what the image is built from; the rest of the repository never reaches the asset.
      ignoreMode: IgnoreMode.DOCKER,
      exclude: ['*', '!package.json', '!package-lock.json', '!tsconfig.json', '!shared', '!functions'],
    }),
    essential: true,
    logging: LogDrivers.awsLogs({ streamPrefix: options.name, logGroup }),
    environment: options.environment,
    readonlyRootFilesystem: true,
    ...(options.stopTimeout ? { stopTimeout: options.stopTimeout } : {}),
  });
  return taskDefinition;
}

/** Lets `machine` run the task and wait for it (`ecs:runTask.sync`). */
export function grantRunTask(
  machine: StateMachine,
  options: { cluster: ICluster; taskDefinition: TaskDefinition; what: string },
): void {
  const stack = Stack.of(machine);
  const { cluster, taskDefinition } = options;
  machine.addToRolePolicy(
    new PolicyStatement({
      actions: ['ecs:RunTask'],
      resources: [taskDefinition.taskDefinitionArn],
      conditions: { ArnEquals: { 'ecs:cluster': cluster.clusterArn } },
    }),
  );
  machine.addToRolePolicy(
    new PolicyStatement({
      actions: ['ecs:StopTask', 'ecs:DescribeTasks'],
      resources: [
        stack.formatArn({ service: 'ecs', resource: 'task', resourceName: `${cluster.clusterName}/*` }),
      ],
    }),
  );
  machine.addToRolePolicy(
    new PolicyStatement({
      actions: ['iam:PassRole'],
      resources: [taskDefinition.taskRole.roleArn, taskDefinition.obtainExecutionRole().roleArn],
    }),
  );
  // The managed rule through which Step Functions learns that a task stopped (.sync).
  machine.addToRolePolicy(
    new PolicyStatement({
      actions: ['events:PutTargets', 'events:PutRule', 'events:DescribeRule'],
      resources: [
        stack.formatArn({
          service: 'events',
          resource: 'rule',
          resourceName: 'StepFunctionsGetEventsForECSTaskRule',
        }),
      ],
    }),
  );
  // cdk-nag names an unresolved region or account by its pseudo parameter, as `npx cdk synth`
  // without an AWS environment leaves them.
  const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
  const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
  Validations.of(machine).acknowledge({
    id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ecs:${region}:${account}:task/<${stack.getLogicalId(cluster.node.defaultChild as never)}>/*]`,
    reason: `The ${options.what} tasks of this cluster: their ids exist only once started`,
  });
}

/** The `${<prefix>ClusterArn}`, `…TaskDefinitionArn`, `…SubnetIds`, … placeholders and their values. */
export function runTaskSubstitutions(
  prefix: string,
  values: {
    clusterArn: string;
    taskDefinitionArn: string;
    /** Comma-separated: the state machine splits them (States.StringSplit). */
    subnetIds: string;
    securityGroupId: string;
    assignPublicIp: boolean;
  },
): Record<string, string> {
  return {
    [`${prefix}ClusterArn`]: values.clusterArn,
    [`${prefix}TaskDefinitionArn`]: values.taskDefinitionArn,
    [`${prefix}SubnetIds`]: values.subnetIds,
    [`${prefix}SecurityGroupId`]: values.securityGroupId,
    [`${prefix}AssignPublicIp`]: values.assignPublicIp ? 'ENABLED' : 'DISABLED',
  };
}
