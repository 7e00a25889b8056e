/**
 * The hook runner: a Fargate task (ARM64, functions/common/fargate-task.Dockerfile) that the backup state
 * machine starts with `ecs:runTask.sync` for each ItemBlock whose hooks may outlast a Lambda.
 * Its role may read and write the backup bucket, use its key, describe the clusters and, through
 * an EKS access entry with the hook-exec Kubernetes group, exec into pods (RBAC in the cluster
 * binds that group; see docs/backup-hooks.md) — nothing else. Without a VPC given, a small one
 * with public subnets only (no NAT gateway, nothing billed while idle) and flow logs is created;
 * the task's security group allows HTTPS out only.
 */
import { Fn, Stack, Validations } from 'aws-cdk-lib';
import {
  FlowLogDestination,
  type IVpc,
  Peer,
  Port,
  SecurityGroup,
  type SubnetSelection,
  SubnetType,
  Vpc,
} from 'aws-cdk-lib/aws-ec2';
import { Cluster, ContainerInsights, type FargateTaskDefinition } from 'aws-cdk-lib/aws-ecs';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { arm64TaskDefinition, grantRunTask, runTaskSubstitutions } from './fargate-task.js';
import { clusterAccess } from './step-function.js';
import { type BackupStore, grantStorageAccess, type StorageArea } from './storage-access.js';

/** The Kubernetes group whose members may exec into pods for hooks (bound by the cluster's RBAC). */
export const HOOK_EXEC_GROUP = 'lifeboat:hook-exec';
/** The container name the state machine's override names. */
export const HOOK_RUNNER_CONTAINER = 'hook-runner';

export interface HookRunnerProps {
  readonly store: BackupStore;
  /** The working data its runs write (the backup's or the restore's). */
  readonly writes: readonly StorageArea[];
  /**
   * The Kubernetes groups of its access entries (bound by infra/kubernetes/rbac.yaml): at least
   * the hook-exec group; the backup's also takes CSI snapshots of the blocks it backs up.
   */
  readonly kubernetesGroups: readonly string[];
  readonly clusters: readonly string[];
  /** Where tasks run; unset: a VPC of public subnets is created and tasks get a public IP. */
  readonly vpc?: IVpc;
  /** Subnets of the given VPC (default: its private subnets with egress, no public IP). */
  readonly vpcSubnets?: SubnetSelection;
}

export class HookRunner extends Construct {
  readonly cluster: Cluster;
  readonly taskDefinition: FargateTaskDefinition;
  /** The task's role (a deferred block's volumes are snapshotted with it too). */
  readonly taskRole: Role;
  readonly securityGroup: SecurityGroup;
  readonly subnetIds: readonly string[];
  readonly assignPublicIp: boolean;

  constructor(scope: Construct, id: string, props: HookRunnerProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const vpc =
      props.vpc ??
      new Vpc(this, 'Vpc', {
        maxAzs: 2,
        natGateways: 0,
        subnetConfiguration: [{ name: 'tasks', subnetType: SubnetType.PUBLIC }],
        flowLogs: {
          all: {
            destination: FlowLogDestination.toCloudWatchLogs(
              new LogGroup(this, 'FlowLogs', {
                retention: RetentionDays.ONE_MONTH,
                encryptionKey: props.store.key,
              }),
            ),
          },
        },
      });
    this.assignPublicIp = props.vpc === undefined;
    const subnets = vpc.selectSubnets(
      props.vpcSubnets ?? { subnetType: props.vpc ? SubnetType.PRIVATE_WITH_EGRESS : SubnetType.PUBLIC },
    );
    this.subnetIds = subnets.subnetIds;
    this.securityGroup = new SecurityGroup(this, 'TaskSecurityGroup', {
      vpc,
      allowAllOutbound: false,
      description: 'Lifeboat hook runner: HTTPS to S3, EKS, STS, ECR and CloudWatch Logs',
    });
    this.securityGroup.addEgressRule(Peer.anyIpv4(), Port.tcp(443), 'HTTPS to AWS APIs and the EKS endpoint');
    this.cluster = new Cluster(this, 'Cluster', { vpc, containerInsightsV2: ContainerInsights.ENABLED });

    const taskRole = new Role(this, 'TaskRole', {
      assumedBy: new ServicePrincipal('ecs-tasks.amazonaws.com'),
      description: 'Lifeboat hook runner: backs up ItemBlocks whose hooks outlast a Lambda',
    });
    grantStorageAccess({ grantee: taskRole, store: props.store, access: { writes: props.writes } });
    clusterAccess(this, {
      role: taskRole,
      clusters: props.clusters,
      kubernetesGroups: props.kubernetesGroups,
    });

    this.taskRole = taskRole;
    this.taskDefinition = arm64TaskDefinition(this, {
      name: HOOK_RUNNER_CONTAINER,
      // Each workflow has its hook runner: /ecs/<stack>-backup-hook-runner, …-restore-hook-runner.
      logName: `${scope.node.id.toLowerCase()}-${HOOK_RUNNER_CONTAINER}`,
      cpu: 256,
      memoryLimitMiB: 512,
      taskRole,
      logKey: props.store.key,
      environment: {
        AWS_REGION: stack.region,
        LIFEBOAT_BUCKET: props.store.bucket.bucketName,
        LIFEBOAT_PREFIX: props.store.prefix,
        NODE_OPTIONS: '--enable-source-maps',
      },
    });

    const acknowledge = (id: string, reason: string): void =>
      Validations.of(this).acknowledge({ id, reason });
    acknowledge(
      'AwsSolutions-ECS2',
      'The variables name the bucket, prefix and region only; the input arrives as a container override',
    );
    acknowledge(
      'AwsSolutions-IAM5[Resource::*]',
      'ecr:GetAuthorizationToken (image pull by the execution role) has no resource-level permissions',
    );
  }

  /** Lets the state machine run the task and wait for it (`ecs:runTask.sync`). */
  grantRun(machine: StateMachine): void {
    grantRunTask(machine, {
      cluster: this.cluster,
      taskDefinition: this.taskDefinition,
      what: 'hook runner',
    });
  }

  /** The values of the state machine's `${HookRunner…}` placeholders. */
  substitutions(): Record<string, string> {
    return hookRunnerSubstitutions({
      clusterArn: this.cluster.clusterArn,
      taskDefinitionArn: this.taskDefinition.taskDefinitionArn,
      subnetIds: Fn.join(',', [...this.subnetIds]),
      securityGroupId: this.securityGroup.securityGroupId,
      assignPublicIp: this.assignPublicIp,
    });
  }
}

/** The `${HookRunner…}` placeholders of backup.asl.json (RunLongHookBlock) and what fills each. */
export function hookRunnerSubstitutions(
  values: Parameters<typeof runTaskSubstitutions>[1],
): Record<string, string> {
  return runTaskSubstitutions('HookRunner', values);
}
