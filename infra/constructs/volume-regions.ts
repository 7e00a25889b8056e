/**
 * Where and how RestoreVolumes may make restored volumes: in its own region (restore-volumes.ts
 * asks for that) and in the other regions of the stack's own account a restore's `volumeRegion`
 * (without a role) may name: `volumeRegions`, and the regions of `drTargets` in its own account,
 * where copySnapshots puts the copies a restore there needs. The same statements for every region:
 * create the volumes from any snapshot by id, tag them only while creating them, use their keys only
 * through EC2 there. Never in a region not named: a restore elsewhere is refused by IAM, naming the call.
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

/**
 * Lets RestoreVolumes' role create, tag and encrypt restored volumes in `regions` (its own region
 * is `stack.region`, a token in an environment-agnostic stack): volumes only carrying the restore
 * tag, tags only while creating a volume, from any snapshot by id (a DR copy shared by another
 * account has no account in its ARN), keys only through EC2 there, grants only for AWS resources.
 */
export function grantRestoreVolumeRegions(options: { role: IRole; regions: readonly string[] }): void {
  const { role, regions } = options;
  if (regions.length === 0) return;
  const stack = Stack.of(role);
  const add = (statement: PolicyStatement): void => {
    role.addToPrincipalPolicy(statement);
  };
  const arns = (service: string, resource: string, account?: string): string[] =>
    regions.map((region) =>
      stack.formatArn({
        service,
        region,
        resource,
        resourceName: '*',
        ...(account === undefined ? {} : { account }),
      }),
    );
  const volumes = arns('ec2', 'volume');
  const keys = arns('kms', 'key');
  add(
    new PolicyStatement({
      actions: ['ec2:CreateVolume'],
      resources: volumes,
      conditions: { Null: { 'aws:RequestTag/velero.io/restore': 'false' } },
    }),
  );
  add(new PolicyStatement({ actions: ['ec2:CreateVolume'], resources: arns('ec2', 'snapshot', '') }));
  add(
    new PolicyStatement({
      actions: ['ec2:CreateTags'],
      resources: volumes,
      conditions: { StringEquals: { 'ec2:CreateAction': 'CreateVolume' } },
    }),
  );
  const services = regions.map((r) => `ec2.${r}.amazonaws.com`);
  const throughEc2 = { 'kms:ViaService': services.length === 1 ? services[0] : services };
  add(
    new PolicyStatement({
      actions: [
        'kms:DescribeKey',
        'kms:Decrypt',
        'kms:GenerateDataKeyWithoutPlaintext',
        'kms:ReEncryptFrom',
        'kms:ReEncryptTo',
      ],
      resources: keys,
      conditions: { StringEquals: throughEc2 },
    }),
  );
  add(
    new PolicyStatement({
      actions: ['kms:CreateGrant'],
      resources: keys,
      conditions: { StringEquals: throughEc2, Bool: { 'kms:GrantIsForAWSResource': 'true' } },
    }),
  );
  acknowledgeRegions({ role, stack, regions });
}

function acknowledgeRegions(options: { role: IRole; stack: Stack; regions: readonly string[] }): void {
  const { role, stack } = options;
  const acknowledge = (id: string, reason: string): void => Validations.of(role).acknowledge({ id, reason });
  // cdk-nag names a resource as the template has it: pseudo parameters for an environment-agnostic stack.
  const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
  for (const named of options.regions) {
    const region = Token.isUnresolved(named) ? '<AWS::Region>' : named;
    acknowledge(
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ec2:${region}:${account}:volume/*]`,
      'A restore creates volumes whose ids do not exist yet; CreateVolume requires the velero.io/restore tag and CreateTags only applies while creating a volume',
    );
    acknowledge(
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ec2:${region}::snapshot/*]`,
      "Any backup's snapshot (or its copy in this region) may be restored; the snapshot ids come from the backup's volumes-info",
    );
    acknowledge(
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:kms:${region}:${account}:key/*]`,
      'volumeKmsKeyId names any key of the account; it is used only through EC2 (kms:ViaService), and grants only for AWS resources',
    );
  }
}
