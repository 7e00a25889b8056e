/**
 * RestoreVolumes in other regions of the stack's own account (a restore's `volumeRegion` without
 * a role): it may create the restored volumes there, from any snapshot by id, tag them only while
 * creating them, and use their keys only through EC2 there, exactly as in its own region
 * (restore-volumes.ts), in the regions the stack is told of: `volumeRegions`, and the regions of
 * `drTargets` in its own account, where copySnapshots puts the copies a restore there needs.
 * Never in a region not named: a restore elsewhere is refused by IAM, naming the call.
 */
import { Stack, Token, Validations } from 'aws-cdk-lib';
import { type IRole, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { DrTarget } from './dr-access.js';

/** The regions besides its own a stack's restores may create volumes in. */
export function restoreVolumeRegions(options: {
  stack: Stack;
  volumeRegions: readonly string[];
  drTargets: readonly DrTarget[];
}): string[] {
  const { stack } = options;
  const own = options.drTargets.filter((t) => t.account === stack.account).map((t) => t.region);
  return [...new Set([...options.volumeRegions, ...own])].filter((r) => r !== stack.region).sort();
}

/** Lets RestoreVolumes' role create, tag and encrypt restored volumes in `regions`. */
export function grantRestoreVolumeRegions(options: { role: IRole; regions: readonly string[] }): void {
  const { role, regions } = options;
  if (regions.length === 0) return;
  const stack = Stack.of(role);
  const add = (statement: PolicyStatement): void => {
    role.addToPrincipalPolicy(statement);
  };
  const arns = (resource: string, account?: string): string[] =>
    regions.map((region) =>
      stack.formatArn({
        service: resource === 'key' ? 'kms' : 'ec2',
        region,
        resource,
        resourceName: '*',
        ...(account === undefined ? {} : { account }),
      }),
    );
  const volumes = arns('volume');
  add(
    new PolicyStatement({
      actions: ['ec2:CreateVolume'],
      resources: volumes,
      conditions: { Null: { 'aws:RequestTag/velero.io/restore': 'false' } },
    }),
  );
  // A snapshot there may be a copy another account shared: no account in its ARN.
  add(new PolicyStatement({ actions: ['ec2:CreateVolume'], resources: arns('snapshot', '') }));
  add(
    new PolicyStatement({
      actions: ['ec2:CreateTags'],
      resources: volumes,
      conditions: { StringEquals: { 'ec2:CreateAction': 'CreateVolume' } },
    }),
  );
  const throughEc2 = { 'kms:ViaService': regions.map((r) => `ec2.${r}.amazonaws.com`) };
  add(
    new PolicyStatement({
      actions: [
        'kms:DescribeKey',
        'kms:Decrypt',
        'kms:GenerateDataKeyWithoutPlaintext',
        'kms:ReEncryptFrom',
        'kms:ReEncryptTo',
      ],
      resources: arns('key'),
      conditions: { StringEquals: throughEc2 },
    }),
  );
  add(
    new PolicyStatement({
      actions: ['kms:CreateGrant'],
      resources: arns('key'),
      conditions: { StringEquals: throughEc2, Bool: { 'kms:GrantIsForAWSResource': 'true' } },
    }),
  );
  acknowledgeRegions({ role, stack, regions });
}

function acknowledgeRegions(options: { role: IRole; stack: Stack; regions: readonly string[] }): void {
  const { role, stack } = options;
  const acknowledge = (id: string, reason: string): void => Validations.of(role).acknowledge({ id, reason });
  const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
  for (const region of options.regions) {
    acknowledge(
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ec2:${region}:${account}:volume/*]`,
      'A restore into this region (volumeRegion) creates volumes whose ids do not exist yet; only with the velero.io/restore tag, tagged only while created',
    );
    acknowledge(
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ec2:${region}::snapshot/*]`,
      "A restore into this region makes volumes from the backup's snapshot copies there, by the ids in its volumes-info",
    );
    acknowledge(
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:kms:${region}:${account}:key/*]`,
      'volumeKmsKeyId names any key of the account in this region; used only through EC2 there, grants only for AWS resources',
    );
  }
}
