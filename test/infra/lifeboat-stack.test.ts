import { App, type Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { LifeboatStack } from '../../infra/lifeboat-stack.js';

/** Synthesizes the stack; without `bundle`, functions are not bundled (fast, as cdk's own tests do). */
function synth(options: { bundle: boolean } = { bundle: false }): { stack: Stack; template: Template } {
  const app = new App(options.bundle ? {} : { context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new LifeboatStack(app, 'Lifeboat', {
    env: { account: '123456789012', region: 'us-east-1' },
    clusters: ['prod-a'],
  });
  const template = Template.fromStack(stack);
  return { stack, template };
}

describe('the Lifeboat stack', () => {
  let stack: Stack;
  let template: Template;
  beforeAll(() => {
    ({ stack, template } = synth());
  }, 60_000);

  it('encrypts the backup bucket with its own rotating KMS key', () => {
    template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          Match.objectLike({
            ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: Match.anyValue() },
          }),
        ],
      },
      VersioningConfiguration: { Status: 'Enabled' },
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
    });
  });

  it('refuses requests without TLS on every bucket', () => {
    const policies = template.findResources('AWS::S3::BucketPolicy');
    const buckets = template.findResources('AWS::S3::Bucket');
    expect(Object.keys(policies)).toHaveLength(Object.keys(buckets).length);
    for (const policy of Object.values(policies)) {
      expect(policy.Properties.PolicyDocument.Statement).toContainEqual(
        expect.objectContaining({
          Effect: 'Deny',
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      );
    }
  });

  it('expires working data of executions, outside the Velero layout', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([Match.objectLike({ Prefix: 'plugins/lifeboat/work/', Status: 'Enabled' })]),
      },
    });
  });

  it('runs the restore state machine from its ASL file with every placeholder substituted', () => {
    const machines = Object.values(template.findResources('AWS::StepFunctions::StateMachine'));
    const machine = machines.find((m) =>
      JSON.stringify(m.Properties.DefinitionString).includes('PlanRestore'),
    );
    expect(Object.keys(machine?.Properties.DefinitionSubstitutions ?? {}).sort()).toEqual([
      'DataMoverAssignPublicIp',
      'DataMoverClusterArn',
      'DataMoverSecurityGroupId',
      'DataMoverSubnetIds',
      'DataMoverTaskDefinitionArn',
      'FinalizeRestoreFunctionArn',
      'HookRunnerAssignPublicIp',
      'HookRunnerClusterArn',
      'HookRunnerSecurityGroupId',
      'HookRunnerSubnetIds',
      'HookRunnerTaskDefinitionArn',
      'PatchProvisionedVolumesFunctionArn',
      'PlanRestoreFunctionArn',
      'RecordRestoreFailureFunctionArn',
      'RestoreHooksFunctionArn',
      'RestorePhaseFunctionArn',
      'RestoreVolumesFunctionArn',
      'RunRestoreRecipeHookFunctionArn',
      'ValidateRestoreFunctionArn',
    ]);
    // A recipe's restore hook steps exec in pods with the role that has the cluster access entry.
    template.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: Match.stringLikeRegexp('-RunRestoreRecipeHook$'),
      Timeout: 900,
    });
    template.hasResourceProperties('AWS::EKS::AccessEntry', {
      ClusterName: 'prod-a',
      AccessPolicies: [
        Match.objectLike({ PolicyArn: Match.stringLikeRegexp('AmazonEKSClusterAdminPolicy') }),
      ],
    });
  });

  it('runs the backup state machine from the ASL file with every placeholder substituted', () => {
    const machines = Object.values(template.findResources('AWS::StepFunctions::StateMachine'));
    const machine = machines.find((m) =>
      JSON.stringify(m.Properties.DefinitionString).includes('CollectItems'),
    );
    const definition = JSON.stringify(machine?.Properties.DefinitionString);
    expect(definition).toContain('ValidateBackup');
    expect(machine?.Properties.DefinitionSubstitutions).toEqual({
      ValidateBackupFunctionArn: expect.anything(),
      CollectItemsFunctionArn: expect.anything(),
      VolumeOperationsFunctionArn: expect.anything(),
      FinalizeBackupFunctionArn: expect.anything(),
      RecordBackupFailureFunctionArn: expect.anything(),
      HookRunnerClusterArn: expect.anything(),
      HookRunnerTaskDefinitionArn: expect.anything(),
      HookRunnerSubnetIds: expect.anything(),
      HookRunnerSecurityGroupId: expect.anything(),
      HookRunnerAssignPublicIp: 'ENABLED',
      DataMoverClusterArn: expect.anything(),
      DataMoverTaskDefinitionArn: expect.anything(),
      DataMoverSubnetIds: expect.anything(),
      DataMoverSecurityGroupId: expect.anything(),
      DataMoverAssignPublicIp: 'ENABLED',
      CollectRecipeItemsFunctionArn: expect.anything(),
      BackupRecipeGroupFunctionArn: expect.anything(),
      RunRecipeHookFunctionArn: expect.anything(),
    });
  });

  it('runs long hooks on an ARM64 Fargate task whose role reaches only the bucket, its key and pod exec', () => {
    template.hasResourceProperties('AWS::ECS::TaskDefinition', {
      RequiresCompatibilities: ['FARGATE'],
      RuntimePlatform: { CpuArchitecture: 'ARM64', OperatingSystemFamily: 'LINUX' },
      ContainerDefinitions: [
        Match.objectLike({
          Name: 'hook-runner',
          ReadonlyRootFilesystem: true,
          LogConfiguration: Match.objectLike({ LogDriver: 'awslogs' }),
        }),
      ],
    });
    // The access entries of the steps that exec hooks carry the group the cluster's RBAC binds to
    // pods/exec: the worker, the recipe hook steps, the restore hooks and both hook runners. Only
    // the worker, which also reads the items it backs up, has an access policy besides.
    const entries = Object.values(template.findResources('AWS::EKS::AccessEntry')).filter((e) =>
      (e.Properties.KubernetesGroups ?? []).includes('lifeboat:hook-exec'),
    );
    expect(entries).toHaveLength(6);
    expect(entries.filter((e) => (e.Properties.AccessPolicies ?? []).length === 0)).toHaveLength(5);
    // The task roles: S3 and KMS grants, DescribeCluster and, for the backup's runner, the EC2
    // snapshot calls a block's volumes need (as the workers'), nothing else.
    const taskRoles = Object.entries(template.findResources('AWS::IAM::Role')).filter(([, r]) =>
      JSON.stringify(r.Properties.AssumeRolePolicyDocument).includes('ecs-tasks.amazonaws.com'),
    );
    const policies = Object.values(template.findResources('AWS::IAM::Policy'));
    const actionsOf = (id: string): string[] =>
      policies
        .filter((p) => JSON.stringify(p.Properties.Roles).includes(id))
        .flatMap((p) =>
          p.Properties.PolicyDocument.Statement.flatMap((s: { Action: string | string[] }) => s.Action),
        );
    const runnerRoles = taskRoles.filter(([id]) => actionsOf(id).includes('eks:DescribeCluster'));
    expect(runnerRoles).toHaveLength(2);
    const snapshotActions = [
      'ec2:CreateSnapshot',
      'ec2:CreateTags',
      'ec2:DescribeVolumes',
      'ec2:DescribeSnapshots',
    ];
    for (const [id] of runnerRoles)
      for (const action of actionsOf(id))
        if (!snapshotActions.includes(action)) expect(action).toMatch(/^(s3|kms|eks):/);
    const backupRunner = runnerRoles.filter(([id]) => actionsOf(id).includes('ec2:CreateSnapshot'));
    expect(backupRunner).toHaveLength(1);
    const taskRole = backupRunner[0];
    expect(actionsOf(taskRole?.[0] ?? '?')).toEqual(expect.arrayContaining(snapshotActions));
    // The state machine may run exactly this task definition, and pass only its roles.
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: 'ecs:RunTask',
            Condition: { ArnEquals: { 'ecs:cluster': Match.anyValue() } },
          }),
        ]),
      },
    });
  });

  it('lets only the restore create EBS volumes, each with the velero.io/restore tag, and tag only while creating them', () => {
    const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((p) =>
      JSON.stringify(p.Properties.PolicyDocument).includes('ec2:CreateVolume'),
    );
    // RestoreVolumes, and the data mover's block restore (asserted in test/infra/data-mover.test.ts).
    expect(policies).toHaveLength(2);
    const restore = policies.filter((p) => !JSON.stringify(p.Properties.Roles).includes('DataMoverTaskRole'));
    expect(restore).toHaveLength(1);
    const statements = restore[0]?.Properties.PolicyDocument.Statement as {
      Action: string | string[];
      Condition?: unknown;
    }[];
    const withAction = (action: string) =>
      statements.filter((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]).includes(action));
    expect(withAction('ec2:CreateVolume').map((s) => s.Condition)).toContainEqual({
      Null: { 'aws:RequestTag/velero.io/restore': 'false' },
    });
    expect(withAction('ec2:CreateTags').map((s) => s.Condition)).toEqual([
      { StringEquals: { 'ec2:CreateAction': 'CreateVolume' } },
    ]);
    expect(withAction('ec2:DescribeVolumes')).toHaveLength(1);
    expect(JSON.stringify(statements)).not.toMatch(/ec2:(Delete|Attach|Detach|Modify)/);
  });

  it('sends poison ItemBlock messages to a dead-letter queue that a function drains', () => {
    template.hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: { deadLetterTargetArn: Match.anyValue(), maxReceiveCount: 3 },
      KmsMasterKeyId: Match.anyValue(),
    });
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 2);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it('runs every function on nodejs22.x', () => {
    const functions = Object.values(template.findResources('AWS::Lambda::Function'));
    expect(functions.length).toBeGreaterThanOrEqual(10);
    for (const f of functions) expect(f.Properties.Runtime).toBe('nodejs22.x');
  });

  it('gives the cluster-reading steps an EKS access entry on each cluster', () => {
    template.hasResourceProperties('AWS::EKS::AccessEntry', {
      ClusterName: 'prod-a',
      AccessPolicies: [Match.objectLike({ PolicyArn: Match.stringLikeRegexp('AmazonEKSAdminViewPolicy') })],
    });
  });

  it('bundles every function with the local esbuild, without Docker', () => {
    const bundled = synth({ bundle: true }).template;
    const functions = Object.values(bundled.findResources('AWS::Lambda::Function'));
    for (const f of functions) expect(f.Properties.Code.S3Key).toMatch(/\.zip$/);
    // Some 40 bundles on the shared 2-core machine, beside the other infra tests.
  }, 420_000);

  it('lets the backup snapshot EBS volumes only with the velero.io/backup tag, and tag only while snapshotting', () => {
    const statements = Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
      (p) => p.Properties.PolicyDocument.Statement as { Action: unknown; Condition?: unknown }[],
    );
    const withAction = (action: string) =>
      statements.filter((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]).includes(action));
    expect(withAction('ec2:CreateSnapshot').map((s) => s.Condition)).toContainEqual({
      Null: { 'aws:RequestTag/velero.io/backup': 'false' },
    });
    expect(withAction('ec2:CreateTags').map((s) => s.Condition)).toContainEqual({
      StringEquals: { 'ec2:CreateAction': 'CreateSnapshot' },
    });
    expect(withAction('ec2:DescribeSnapshots').length).toBeGreaterThan(0);
    // CSI snapshots: the access entries of the worker, VolumeOperations and the backup's hook
    // runner (which backs up whole blocks, their volumes included) carry the group the cluster
    // binds to the snapshot API.
    const entries = Object.values(template.findResources('AWS::EKS::AccessEntry')).filter((e) =>
      (e.Properties.KubernetesGroups ?? []).includes('lifeboat:volume-snapshots'),
    );
    const roles = entries.map((e) => JSON.stringify(e.Properties.PrincipalArn));
    expect(roles).toHaveLength(3);
    for (const step of ['BackupItemBlockRole', 'VolumeOperationsRole', 'HookRunnerTaskRole'])
      expect(roles.filter((r) => r.includes(`Backup${step}`))).toHaveLength(1);
  });

  it('passes the cdk-nag AwsSolutions checks', () => {
    const report = new AwsSolutionsChecks(stack, { verbose: true }).validateScope(stack);
    expect(report.violations.map((v) => `${v.ruleName}: ${v.description}`)).toEqual([]);
    expect(report.success).toBe(true);
  });
});
