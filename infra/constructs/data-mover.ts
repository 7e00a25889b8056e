/**
 * The data mover (docs/data-mover.md): a Fargate task (ARM64, functions/common/fargate-task.Dockerfile)
 * the backup and restore state machines start with `ecs:runTask.sync`, its job in the container
 * override. Sized for block mode: 2 vCPU (compression, AES-GCM and SHA-256 of every block) and
 * 4 GiB (32 blocks of 512 KiB in flight, four 16 MiB packs uploading, and the repository index,
 * about 100 bytes a blob). It runs in the hook runner's cluster and subnets, with its own
 * security group (HTTPS out only).
 *
 * Its role may, and nothing else: read, write and delete objects under the storage location's
 * repository (`plugins/lifeboat/repository/`) and its own working data
 * (`plugins/lifeboat/work/data-mover/`); wrap and unwrap the repository's data key with the
 * repository key (only with the repository's encryption context); read EBS snapshots of its
 * region with the EBS direct APIs; write snapshots only with the `velero.io/restore` tag, make
 * volumes only with that tag; use EBS's KMS keys only through EC2/EBS; and assume the
 * cross-account restore roles it is given.
 */
import { Duration, Fn, Stack, Token, Validations } from 'aws-cdk-lib';
import { Peer, Port, SecurityGroup } from 'aws-cdk-lib/aws-ec2';
import type { FargateTaskDefinition, ICluster } from 'aws-cdk-lib/aws-ecs';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { type IKey, Key } from 'aws-cdk-lib/aws-kms';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { arm64TaskDefinition, grantRunTask, runTaskSubstitutions } from './fargate-task.js';

/** The container name the state machines' overrides name. */
export const DATA_MOVER_CONTAINER = 'data-mover';
/** The task's memory unless the props say otherwise: what the data mover's peak RSS must stay under. */
export const DATA_MOVER_MEMORY_MIB = 4096;
/** The Velero tag every snapshot and volume a restore writes carries; the role requires it. */
const RESTORE_TAG = 'velero.io/restore';

export interface DataMoverProps {
  readonly bucket: IBucket;
  /** The bucket's SSE-KMS key: objects written and read through S3. */
  readonly storageKey: IKey;
  /** The storage location's prefix in the bucket (default: none). */
  readonly prefix?: string;
  /** Wraps the repository's data key; default: a new rotating key. */
  readonly repositoryKey?: IKey;
  /** Where tasks run: the hook runner's cluster, its subnets and whether tasks get a public IP. */
  readonly cluster: ICluster;
  readonly subnetIds: readonly string[];
  readonly assignPublicIp: boolean;
  /** Roles in other accounts a restore may write snapshots and volumes through. */
  readonly crossAccountRestoreRoles?: readonly string[];
  /** Default 2048 (2 vCPU) and 4096 MiB. */
  readonly cpu?: number;
  readonly memoryLimitMiB?: number;
}

/** What a workflow's data mover takes beyond the storage and the tasks' cluster it is given. */
export type WorkflowDataMoverProps = Omit<
  DataMoverProps,
  'bucket' | 'storageKey' | 'prefix' | 'cluster' | 'subnetIds' | 'assignPublicIp'
>;

/**
 * A workflow's data mover: on the workflow's storage, its tasks in the hook runner's cluster and
 * subnets (one Fargate network for both kinds of task).
 */
export function workflowDataMover(
  scope: Construct,
  options: {
    readonly tasksBeside: {
      readonly cluster: ICluster;
      readonly subnetIds: readonly string[];
      readonly assignPublicIp: boolean;
    };
    readonly bucket: IBucket;
    readonly storageKey: IKey;
    readonly prefix?: string | undefined;
    readonly props?: WorkflowDataMoverProps | undefined;
  },
): DataMover {
  const { tasksBeside } = options;
  return new DataMover(scope, 'DataMover', {
    ...options.props,
    bucket: options.bucket,
    storageKey: options.storageKey,
    ...(options.prefix ? { prefix: options.prefix } : {}),
    cluster: tasksBeside.cluster,
    subnetIds: tasksBeside.subnetIds,
    assignPublicIp: tasksBeside.assignPublicIp,
  });
}

export class DataMover extends Construct {
  readonly taskDefinition: FargateTaskDefinition;
  readonly taskRole: Role;
  readonly repositoryKey: IKey;
  readonly securityGroup: SecurityGroup;
  private readonly props: DataMoverProps;

  constructor(scope: Construct, id: string, props: DataMoverProps) {
    super(scope, id);
    this.props = props;
    const stack = Stack.of(this);
    this.repositoryKey =
      props.repositoryKey ??
      new Key(this, 'RepositoryKey', {
        description: 'Lifeboat data mover repository: wraps the repository data keys',
        enableKeyRotation: true,
      });
    this.securityGroup = new SecurityGroup(this, 'TaskSecurityGroup', {
      vpc: props.cluster.vpc,
      allowAllOutbound: false,
      description: 'Lifeboat data mover: HTTPS to S3, EBS, EC2, KMS, STS, ECR and CloudWatch Logs',
    });
    this.securityGroup.addEgressRule(Peer.anyIpv4(), Port.tcp(443), 'HTTPS to AWS APIs');

    this.taskRole = new Role(this, 'TaskRole', {
      assumedBy: new ServicePrincipal('ecs-tasks.amazonaws.com'),
      description: 'Lifeboat data mover: volume data between EBS snapshots and the repository',
    });
    this.grantRepository(stack);
    this.grantEbs(stack);
    const roles = props.crossAccountRestoreRoles ?? [];
    if (roles.length > 0)
      this.taskRole.addToPolicy(new PolicyStatement({ actions: ['sts:AssumeRole'], resources: [...roles] }));

    this.taskDefinition = arm64TaskDefinition(this, {
      name: DATA_MOVER_CONTAINER,
      cpu: props.cpu ?? 2048,
      memoryLimitMiB: props.memoryLimitMiB ?? DATA_MOVER_MEMORY_MIB,
      taskRole: this.taskRole,
      logKey: props.storageKey,
      environment: { AWS_REGION: stack.region, NODE_OPTIONS: '--enable-source-maps' },
      // StopTask: SIGTERM, then SIGKILL after this; the job records Cancelled well within it.
      stopTimeout: Duration.seconds(30),
    });
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-ECS2',
      reason: 'The variables name the region only; the job arrives as a container override',
    });
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'ecr:GetAuthorizationToken (image pull by the execution role), ec2:DescribeSnapshots and ec2:DescribeVolumes have no resource-level permissions',
    });
  }

  /** S3 under the repository and the working-data prefixes; the repository key; the bucket key through S3. */
  private grantRepository(stack: Stack): void {
    const { bucket, storageKey } = this.props;
    const prefix = this.props.prefix ? `${this.props.prefix.replace(/\/+$/, '')}/` : '';
    const areas = [`${prefix}plugins/lifeboat/repository/`, `${prefix}plugins/lifeboat/work/data-mover/`];
    this.taskRole.addToPolicy(
      new PolicyStatement({
        actions: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'],
        resources: areas.map((area) => bucket.arnForObjects(`${area}*`)),
      }),
    );
    // Unconditioned: without ListBucket S3 answers 403, not 404, for an object that does not
    // exist (a first run's progress, checkpoint, format object). Key names only, no contents.
    this.taskRole.addToPolicy(
      new PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }),
    );
    this.taskRole.addToPolicy(
      new PolicyStatement({
        actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
        resources: [storageKey.keyArn],
        conditions: { StringEquals: { 'kms:ViaService': `s3.${stack.region}.amazonaws.com` } },
      }),
    );
    this.taskRole.addToPolicy(
      new PolicyStatement({
        actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
        resources: [this.repositoryKey.keyArn],
        // KmsKeyWrapper binds every data key to its repository's id.
        conditions: { StringLike: { 'kms:EncryptionContext:lifeboat:repository': '*' } },
      }),
    );
    const ack = (resource: string, reason: string): void =>
      Validations.of(this.taskRole).acknowledge({ id: `AwsSolutions-IAM5[Resource::${resource}]`, reason });
    const bucketId = `<${stack.getLogicalId(bucket.node.defaultChild as never)}.Arn>`;
    for (const area of areas)
      ack(
        `${bucketId}/${area}*`,
        'Repository packs, indexes and manifests, and the job working data: ids are content hashes and job ids',
      );
  }

  /** EBS direct APIs: read snapshots of this region; write restore-tagged ones; volumes with the tag. */
  private grantEbs(stack: Stack): void {
    const snapshotsHere = stack.formatArn({
      service: 'ec2',
      resource: 'snapshot',
      resourceName: '*',
      account: '',
    });
    const snapshotsAnywhere = stack.formatArn({
      service: 'ec2',
      resource: 'snapshot',
      resourceName: '*',
      account: '',
      region: '*',
    });
    const volumesAnywhere = stack.formatArn({
      service: 'ec2',
      resource: 'volume',
      resourceName: '*',
      region: '*',
    });
    const hasRestoreTag = { Null: { [`aws:RequestTag/${RESTORE_TAG}`]: 'false' } };
    const statements = [
      {
        actions: ['ebs:ListSnapshotBlocks', 'ebs:ListChangedBlocks', 'ebs:GetSnapshotBlock'],
        resources: [snapshotsHere],
      },
      // A restore writes new snapshots in this account, in any region (a restore elsewhere).
      { actions: ['ebs:StartSnapshot'], resources: [snapshotsAnywhere], conditions: hasRestoreTag },
      {
        actions: ['ebs:PutSnapshotBlock', 'ebs:CompleteSnapshot'],
        resources: [snapshotsAnywhere],
        conditions: { Null: { [`aws:ResourceTag/${RESTORE_TAG}`]: 'false' } },
      },
      // StartSnapshot's tags are set through EC2's CreateTags.
      { actions: ['ec2:CreateTags'], resources: [snapshotsAnywhere], conditions: hasRestoreTag },
      { actions: ['ec2:CreateVolume'], resources: [volumesAnywhere], conditions: hasRestoreTag },
      { actions: ['ec2:CreateVolume'], resources: [snapshotsAnywhere] },
      {
        actions: ['ec2:CreateTags'],
        resources: [volumesAnywhere],
        conditions: { StringEquals: { 'ec2:CreateAction': 'CreateVolume' } },
      },
      { actions: ['ec2:DescribeSnapshots', 'ec2:DescribeVolumes'], resources: ['*'] },
      {
        // Encrypted snapshots and volumes: their keys, only as EC2 and EBS use them.
        actions: [
          'kms:Decrypt',
          'kms:GenerateDataKeyWithoutPlaintext',
          'kms:ReEncryptFrom',
          'kms:ReEncryptTo',
          'kms:DescribeKey',
        ],
        resources: [stack.formatArn({ service: 'kms', resource: 'key', resourceName: '*', region: '*' })],
        conditions: { StringLike: { 'kms:ViaService': ['ec2.*.amazonaws.com', 'ebs.*.amazonaws.com'] } },
      },
      {
        // Grants only for the AWS resource (the snapshot or volume) EC2/EBS make with the key.
        actions: ['kms:CreateGrant'],
        resources: [stack.formatArn({ service: 'kms', resource: 'key', resourceName: '*', region: '*' })],
        conditions: {
          StringLike: { 'kms:ViaService': ['ec2.*.amazonaws.com', 'ebs.*.amazonaws.com'] },
          Bool: { 'kms:GrantIsForAWSResource': 'true' },
        },
      },
    ];
    for (const s of statements) this.taskRole.addToPolicy(new PolicyStatement(s));

    const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
    const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
    const ack = (resource: string, reason: string): void =>
      Validations.of(this.taskRole).acknowledge({ id: `AwsSolutions-IAM5[Resource::${resource}]`, reason });
    ack(
      `arn:<AWS::Partition>:ec2:${region}::snapshot/*`,
      "Any backed-up volume's snapshot is read; its id comes with the job",
    );
    ack(
      'arn:<AWS::Partition>:ec2:*::snapshot/*',
      'Restored snapshots do not exist before StartSnapshot; writes require the velero.io/restore tag',
    );
    ack(
      `arn:<AWS::Partition>:ec2:*:${account}:volume/*`,
      'Restored volumes do not exist before CreateVolume, which requires the velero.io/restore tag',
    );
    ack('*', 'ec2:DescribeSnapshots and ec2:DescribeVolumes have no resource-level permissions');
    ack(
      `arn:<AWS::Partition>:kms:*:${account}:key/*`,
      "The snapshots' EBS keys are the volumes' own; only through EC2 and EBS (kms:ViaService)",
    );
  }

  /** Lets a state machine run the task and wait for it (`ecs:runTask.sync`). */
  grantRun(machine: StateMachine): void {
    grantRunTask(machine, {
      cluster: this.props.cluster,
      taskDefinition: this.taskDefinition,
      what: 'data mover',
    });
  }

  /** The values of the state machines' `${DataMover…}` placeholders. */
  substitutions(): Record<string, string> {
    return runTaskSubstitutions('DataMover', {
      clusterArn: this.props.cluster.clusterArn,
      taskDefinitionArn: this.taskDefinition.taskDefinitionArn,
      subnetIds: Fn.join(',', [...this.props.subnetIds]),
      securityGroupId: this.securityGroup.securityGroupId,
      assignPublicIp: this.props.assignPublicIp,
    });
  }
}
