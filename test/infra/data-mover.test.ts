/**
 * The data mover's deployment, read from synthesized templates: the Fargate task sized for block
 * mode, in the hook runner's cluster, and a task role that reaches only the repository and
 * working-data prefixes, the repository key, EBS reads, restore-tagged EBS writes and the given
 * cross-account roles; the state machine's right to run it.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Vpc } from 'aws-cdk-lib/aws-ec2';
import { Cluster } from 'aws-cdk-lib/aws-ecs';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { Pass, StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { beforeAll, describe, expect, it } from 'vitest';
import { DataMover } from '../../infra/constructs/data-mover.js';
import { LifeboatStack } from '../../infra/lifeboat-stack.js';

const DR_ROLE = 'arn:aws:iam::210987654321:role/lifeboat-dr-restore';

interface Statement {
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

const actionsOf = (s: Statement): string[] => (Array.isArray(s.Action) ? s.Action : [s.Action]);

/** The statements of the policies attached to the data mover's task role. */
function taskRoleStatements(template: Template): Statement[] {
  const roles = Object.entries(template.findResources('AWS::IAM::Role')).filter(
    ([id, r]) =>
      id.includes('DataMoverTaskRole') &&
      JSON.stringify(r.Properties.AssumeRolePolicyDocument).includes('ecs-tasks.amazonaws.com'),
  );
  expect(roles).toHaveLength(1);
  const roleId = roles[0]?.[0] ?? '?';
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((p) => JSON.stringify(p.Properties.Roles).includes(roleId))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
}

describe('the data mover in the Lifeboat stack', () => {
  let stack: LifeboatStack;
  let template: Template;
  let statements: Statement[];
  beforeAll(() => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    stack = new LifeboatStack(app, 'Lifeboat', {
      env: { account: '123456789012', region: 'us-east-1' },
      clusters: ['prod-a'],
      crossAccountRestoreRoles: [DR_ROLE],
    });
    template = Template.fromStack(stack);
    statements = taskRoleStatements(template);
  }, 120_000);

  it('runs an ARM64 Fargate task of 2 vCPU and 4 GiB in the hook runner’s cluster', () => {
    template.hasResourceProperties('AWS::ECS::TaskDefinition', {
      RequiresCompatibilities: ['FARGATE'],
      Cpu: '2048',
      Memory: '4096',
      RuntimePlatform: { CpuArchitecture: 'ARM64', OperatingSystemFamily: 'LINUX' },
      ContainerDefinitions: [
        Match.objectLike({
          Name: 'data-mover',
          ReadonlyRootFilesystem: true,
          StopTimeout: 30,
          LogConfiguration: Match.objectLike({ LogDriver: 'awslogs' }),
        }),
      ],
    });
    const { DataMoverClusterArn, DataMoverSubnetIds } = stack.dataMover.substitutions();
    const hookRunner = stack.backup.hookRunner.substitutions();
    expect(DataMoverClusterArn).toBe(hookRunner.HookRunnerClusterArn);
    expect(stack.resolve(DataMoverSubnetIds)).toEqual(stack.resolve(hookRunner.HookRunnerSubnetIds));
    template.hasResourceProperties('AWS::EC2::SecurityGroup', {
      GroupDescription: Match.stringLikeRegexp('^Lifeboat data mover'),
      SecurityGroupEgress: [Match.objectLike({ IpProtocol: 'tcp', FromPort: 443, ToPort: 443 })],
    });
  });

  it('lets the task reach S3 objects only under the repository and its own working data', () => {
    const objectActions = statements.filter((s) =>
      actionsOf(s).some((a) => a.startsWith('s3:') && a !== 's3:ListBucket'),
    );
    expect(objectActions).toHaveLength(1);
    expect(actionsOf(objectActions[0] as Statement).sort()).toEqual([
      's3:DeleteObject',
      's3:GetObject',
      's3:PutObject',
    ]);
    const objects = objectActions[0] as Statement;
    const resources = JSON.stringify(objects.Resource);
    expect(resources).toContain('/plugins/lifeboat/repository/*');
    expect(resources).toContain('/plugins/lifeboat/work/data-mover/*');
    expect(objects.Resource).toHaveLength(2);
    expect(
      statements
        .flatMap(actionsOf)
        .filter((a) => a.startsWith('s3:'))
        .sort(),
    ).toEqual(['s3:DeleteObject', 's3:GetObject', 's3:ListBucket', 's3:PutObject']);
  });

  it('wraps repository keys with a rotating key of its own, only under a repository’s encryption context', () => {
    const repositoryKey = statements.find((s) =>
      JSON.stringify(s.Condition ?? {}).includes('kms:EncryptionContext:lifeboat:repository'),
    );
    expect(actionsOf(repositoryKey as Statement).sort()).toEqual(['kms:Decrypt', 'kms:GenerateDataKey']);
    const keys = Object.entries(template.findResources('AWS::KMS::Key'));
    const own = keys.find(([id]) => id.includes('DataMoverRepositoryKey'));
    expect(own?.[1].Properties.EnableKeyRotation).toBe(true);
    expect(JSON.stringify(repositoryKey?.Resource)).toContain(own?.[0]);
    // Every other KMS use goes through S3 (the bucket key) or EC2/EBS (snapshot keys).
    for (const s of statements.filter(
      (s) => actionsOf(s).some((a) => a.startsWith('kms:')) && s !== repositoryKey,
    ))
      expect(Object.keys(s.Condition?.StringEquals ?? s.Condition?.StringLike ?? {})).toEqual([
        'kms:ViaService',
      ]);
    // Grants only for the snapshots and volumes EC2/EBS make with the key.
    const grants = statements.filter((s) => actionsOf(s).includes('kms:CreateGrant'));
    expect(grants).toHaveLength(1);
    expect(actionsOf(grants[0] as Statement)).toEqual(['kms:CreateGrant']);
    expect(grants[0]?.Condition).toEqual({
      StringLike: { 'kms:ViaService': ['ec2.*.amazonaws.com', 'ebs.*.amazonaws.com'] },
      Bool: { 'kms:GrantIsForAWSResource': 'true' },
    });
  });

  it('reads snapshots with the EBS direct APIs, and writes snapshots and volumes only with the velero.io/restore tag', () => {
    const withAction = (action: string): Statement[] =>
      statements.filter((s) => actionsOf(s).includes(action));
    expect(withAction('ebs:GetSnapshotBlock')).toHaveLength(1);
    expect(actionsOf(withAction('ebs:GetSnapshotBlock')[0] as Statement).sort()).toEqual([
      'ebs:GetSnapshotBlock',
      'ebs:ListChangedBlocks',
      'ebs:ListSnapshotBlocks',
    ]);
    const restoreTag = { Null: { 'aws:RequestTag/velero.io/restore': 'false' } };
    expect(withAction('ebs:StartSnapshot').map((s) => s.Condition)).toEqual([restoreTag]);
    expect(withAction('ebs:PutSnapshotBlock').map((s) => s.Condition)).toEqual([
      { Null: { 'aws:ResourceTag/velero.io/restore': 'false' } },
    ]);
    expect(withAction('ebs:CompleteSnapshot')).toEqual(withAction('ebs:PutSnapshotBlock'));
    // CreateVolume: new volumes carry the tag; the snapshot it is made from may be any.
    expect(
      withAction('ec2:CreateVolume').map((s) => [
        JSON.stringify(s.Resource).includes(':volume/'),
        s.Condition,
      ]),
    ).toEqual(
      expect.arrayContaining([
        [true, restoreTag],
        [false, undefined],
      ]),
    );
    expect(withAction('ec2:CreateVolume')).toHaveLength(2);
    expect(withAction('ec2:CreateTags').map((s) => s.Condition)).toEqual(
      expect.arrayContaining([restoreTag, { StringEquals: { 'ec2:CreateAction': 'CreateVolume' } }]),
    );
    const all = statements.flatMap(actionsOf);
    expect(
      all.filter((a) => /^ec2:(Delete|Attach|Detach|Modify|CopySnapshot|CreateSnapshot)/.test(a)),
    ).toEqual([]);
    for (const action of all) expect(action).toMatch(/^(s3|kms|ebs|ec2|sts):/);
  });

  it('assumes only the cross-account restore roles it is given', () => {
    const assume = statements.filter((s) => actionsOf(s).includes('sts:AssumeRole'));
    expect(assume).toEqual([expect.objectContaining({ Resource: DR_ROLE })]);
  });
});

describe('the DataMover construct', () => {
  it('lets a state machine run only its task definition in its cluster, and fills the DataMover placeholders', () => {
    const stack = new Stack(new App(), 'Test', { env: { account: '123456789012', region: 'eu-west-1' } });
    const cluster = new Cluster(stack, 'Cluster', { vpc: new Vpc(stack, 'Vpc', { natGateways: 0 }) });
    const mover = new DataMover(stack, 'DataMover', {
      bucket: new Bucket(stack, 'Bucket'),
      storageKey: new Key(stack, 'Key'),
      prefix: 'velero/',
      cluster,
      subnetIds: ['subnet-a', 'subnet-b'],
      assignPublicIp: false,
    });
    const machine = new StateMachine(stack, 'Machine', { definition: new Pass(stack, 'Start') });
    mover.grantRun(machine);
    const template = Template.fromStack(stack);

    expect(Object.keys(mover.substitutions()).sort()).toEqual([
      'DataMoverAssignPublicIp',
      'DataMoverClusterArn',
      'DataMoverSecurityGroupId',
      'DataMoverSubnetIds',
      'DataMoverTaskDefinitionArn',
    ]);
    expect(mover.substitutions().DataMoverAssignPublicIp).toBe('DISABLED');
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: 'ecs:RunTask',
            Resource: { Ref: Match.stringLikeRegexp('DataMoverTask') },
            Condition: { ArnEquals: { 'ecs:cluster': Match.anyValue() } },
          }),
        ]),
      },
    });
    // The storage location's prefix scopes the objects; no role to assume was given.
    const statements = taskRoleStatements(template);
    expect(JSON.stringify(statements)).toContain('/velero/plugins/lifeboat/repository/*');
    expect(statements.flatMap(actionsOf)).not.toContain('sts:AssumeRole');
  });
});
