/**
 * How the workflows reach the data mover, read from a synthesized stack: one data mover task run
 * by both state machines; VolumeOperations and RestoreVolumes given the repository key to name
 * in their jobs; VolumeOperations allowed to delete only backup- or CSI-taken snapshots (the
 * superseded incremental bases); RestoreVolumes allowed the request's KMS key only through EC2.
 * A restore workflow deployed alone gets a data mover of its own.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { RestoreWorkflow } from '../../infra/constructs/restore-workflow.js';
import { LifeboatStack } from '../../infra/lifeboat-stack.js';

interface Statement {
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}
const actionsOf = (s: Statement): string[] => (Array.isArray(s.Action) ? s.Action : [s.Action]);

function statementsOfRole(template: Template, roleIdPart: string): Statement[] {
  const roleIds = Object.keys(template.findResources('AWS::IAM::Role')).filter((id) =>
    id.includes(roleIdPart),
  );
  expect(roleIds).toHaveLength(1);
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((p) => JSON.stringify(p.Properties.Roles).includes(roleIds[0] ?? '?'))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
}

function functionNamed(template: Template, suffix: string): Record<string, unknown> {
  const found = Object.values(template.findResources('AWS::Lambda::Function')).filter((f) =>
    JSON.stringify(f.Properties.FunctionName).endsWith(`-${suffix}"`),
  );
  expect(found).toHaveLength(1);
  return found[0]?.Properties as Record<string, unknown>;
}

describe('the data mover in the workflows', () => {
  let stack: LifeboatStack;
  let template: Template;
  beforeAll(() => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    stack = new LifeboatStack(app, 'Lifeboat', {
      env: { account: '123456789012', region: 'us-east-1' },
      clusters: ['prod-a'],
    });
    template = Template.fromStack(stack);
  }, 120_000);

  it('is one task, run by the backup, restore and delete (gc) state machines alike', () => {
    expect(Object.keys(template.findResources('AWS::ECS::TaskDefinition'))).toHaveLength(3);
    // The drill machine runs no task: it runs the restore workflow.
    const machines = Object.values(template.findResources('AWS::StepFunctions::StateMachine')).filter(
      (m) => m.Properties.DefinitionSubstitutions.DataMoverTaskDefinitionArn,
    );
    expect(machines).toHaveLength(3);
    const taskDefinitions = machines.map((m) =>
      JSON.stringify(m.Properties.DefinitionSubstitutions.DataMoverTaskDefinitionArn),
    );
    expect(new Set(taskDefinitions).size).toBe(1);
    expect(taskDefinitions[0]).toBe(
      JSON.stringify(stack.resolve(stack.dataMover.taskDefinition.taskDefinitionArn)),
    );
    expect(stack.restore.dataMover).toBe(stack.backup.dataMover);
  });

  it('gives the volume steps the repository key to name, and nothing of the key itself', () => {
    const key = stack.resolve(stack.dataMover.repositoryKey.keyArn);
    for (const name of ['VolumeOperations', 'RestoreVolumes', 'PatchProvisionedVolumes']) {
      const fn = functionNamed(template, name) as { Environment: { Variables: Record<string, unknown> } };
      expect(fn.Environment.Variables.LIFEBOAT_REPOSITORY_KEY).toEqual(key);
    }
    const restoreVolumesRole = functionNamed(template, 'RestoreVolumes').Role as { 'Fn::GetAtt': string[] };
    const statements = statementsOfRole(template, restoreVolumesRole['Fn::GetAtt'][0] ?? '?');
    expect(JSON.stringify(statements)).not.toContain(JSON.stringify(key));
  });

  it('lets VolumeOperations delete only snapshots a backup took, or the EBS CSI driver took for a backup’s VolumeSnapshot', () => {
    const statements = statementsOfRole(template, 'VolumeOperationsRole').filter((s) =>
      actionsOf(s).includes('ec2:DeleteSnapshot'),
    );
    expect(statements.map((s) => s.Condition)).toEqual([
      { Null: { 'aws:ResourceTag/velero.io/backup': 'false' } },
      { StringLike: { 'aws:ResourceTag/CSIVolumeSnapshotName': 'velero-*' } },
    ]);
  });

  it('lets RestoreVolumes use a volumeKmsKeyId key only through EC2, and grant it only to AWS resources', () => {
    const role =
      (functionNamed(template, 'RestoreVolumes').Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0] ?? '?';
    // (Besides the backup bucket's key, which storage grants every function.)
    const kms = statementsOfRole(template, role).filter(
      (s) =>
        actionsOf(s).some((a) => a.startsWith('kms:')) && JSON.stringify(s.Condition ?? {}).includes('ec2.'),
    );
    const viaEc2 = { 'kms:ViaService': 'ec2.us-east-1.amazonaws.com' };
    expect(kms).toEqual([
      expect.objectContaining({
        Action: [
          'kms:DescribeKey',
          'kms:Decrypt',
          'kms:GenerateDataKeyWithoutPlaintext',
          'kms:ReEncryptFrom',
          'kms:ReEncryptTo',
        ],
        Condition: { StringEquals: viaEc2 },
      }),
      expect.objectContaining({
        Action: 'kms:CreateGrant',
        Condition: { StringEquals: viaEc2, Bool: { 'kms:GrantIsForAWSResource': 'true' } },
      }),
    ]);
  });
});

describe('a restore workflow deployed alone (a DR account)', () => {
  it('runs a data mover of its own in its hook runner’s cluster', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Dr', { env: { account: '210987654321', region: 'us-west-2' } });
    const workflow = new RestoreWorkflow(stack, 'Restore', {
      store: { bucket: new Bucket(stack, 'Bucket'), key: new Key(stack, 'Key'), prefix: '' },
      clusters: ['dr'],
    });
    const template = Template.fromStack(stack);
    expect(workflow.dataMover.substitutions().DataMoverClusterArn).toBe(
      workflow.hookRunner.substitutions().HookRunnerClusterArn,
    );
    template.hasResourceProperties('AWS::ECS::TaskDefinition', {
      ContainerDefinitions: [Match.objectLike({ Name: 'data-mover' })],
    });
  }, 120_000);
});
