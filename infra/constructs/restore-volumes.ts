/**
 * The restore's volume steps: RestoreVolumes (re-creates EBS volumes from native snapshots, so it
 * reaches EC2 and nothing in the cluster) and PatchProvisionedVolumes (patches re-provisioned
 * PVs, so it shares the cluster-writing role). EC2 is granted as narrowly as EC2 allows: volumes
 * may only be created carrying the restore tag, tags only while creating a volume, and the two
 * Describe calls, which have no resource-level permissions, on `*`. A volume encrypted with the
 * request's `volumeKmsKeyId` needs the key through EC2 only (`kms:ViaService`), grants only for
 * AWS resources.
 */
import { Duration, Stack, Token, Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { Construct } from 'constructs';
import { stepFunction } from './step-function.js';
import type { BackupStore } from './storage-access.js';

/** The Kubernetes group that may patch restored PVs (bound by infra/kubernetes/rbac.yaml). */
export const VOLUME_RESTORE_GROUP = 'lifeboat:volume-restore';

export function restoreVolumeFunctions(
  scope: Construct,
  options: { environment: Record<string, string>; store: BackupStore; clusters: readonly string[] },
): { restoreVolumes: NodejsFunction; patchVolumes: NodejsFunction } {
  const stack = Stack.of(scope);
  const { environment, store } = options;
  // Re-entrant: one call polls for seconds, the state machine waits between calls. EC2 only.
  const restoreVolumes = stepFunction(scope, 'RestoreVolumes', {
    memoryMb: 512,
    timeout: Duration.minutes(5),
    environment,
    store,
    access: { writes: ['restoreWork', 'restoreClaims'] },
  });
  // Waits for re-provisioned claims to bind, then patches their new PVs.
  const patchVolumes = stepFunction(scope, 'PatchProvisionedVolumes', {
    memoryMb: 512,
    timeout: Duration.minutes(5),
    environment,
    store,
    access: { writes: ['restoreWork', 'restoreClaims'] },
    cluster: {
      clusters: options.clusters,
      accessPolicy: 'AmazonEKSAdminViewPolicy',
      kubernetesGroups: [VOLUME_RESTORE_GROUP],
    },
  });
  const volumes = stack.formatArn({ service: 'ec2', resource: 'volume', resourceName: '*' });
  // A snapshot may belong to another account (a DR copy shared with this one): no account in its ARN.
  const snapshots = stack.formatArn({ service: 'ec2', resource: 'snapshot', resourceName: '*', account: '' });
  restoreVolumes.addToRolePolicy(
    new PolicyStatement({
      actions: ['ec2:CreateVolume'],
      resources: [volumes],
      conditions: { Null: { 'aws:RequestTag/velero.io/restore': 'false' } },
    }),
  );
  restoreVolumes.addToRolePolicy(
    new PolicyStatement({ actions: ['ec2:CreateVolume'], resources: [snapshots] }),
  );
  restoreVolumes.addToRolePolicy(
    new PolicyStatement({
      actions: ['ec2:CreateTags'],
      resources: [volumes],
      conditions: { StringEquals: { 'ec2:CreateAction': 'CreateVolume' } },
    }),
  );
  restoreVolumes.addToRolePolicy(
    new PolicyStatement({ actions: ['ec2:DescribeVolumes', 'ec2:DescribeSnapshots'], resources: ['*'] }),
  );
  // volumeKmsKeyId: CreateVolume with a customer key uses it through EC2 (and EBS, through a grant).
  const keys = stack.formatArn({ service: 'kms', resource: 'key', resourceName: '*' });
  const throughEc2 = { 'kms:ViaService': `ec2.${stack.region}.amazonaws.com` };
  restoreVolumes.addToRolePolicy(
    new PolicyStatement({
      actions: [
        'kms:DescribeKey',
        'kms:Decrypt',
        'kms:GenerateDataKeyWithoutPlaintext',
        'kms:ReEncryptFrom',
        'kms:ReEncryptTo',
      ],
      resources: [keys],
      conditions: { StringEquals: throughEc2 },
    }),
  );
  restoreVolumes.addToRolePolicy(
    new PolicyStatement({
      actions: ['kms:CreateGrant'],
      resources: [keys],
      conditions: { StringEquals: throughEc2, Bool: { 'kms:GrantIsForAWSResource': 'true' } },
    }),
  );
  // On RestoreVolumes' own role, which holds these statements.
  const role = restoreVolumes.role ?? scope;
  const acknowledge = (id: string, reason: string): void => Validations.of(role).acknowledge({ id, reason });
  acknowledge(
    'AwsSolutions-IAM5[Resource::*]',
    'ec2:DescribeVolumes and ec2:DescribeSnapshots have no resource-level permissions',
  );
  // cdk-nag names a resource as the template has it: pseudo parameters for an environment-agnostic stack.
  const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
  const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
  acknowledge(
    `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ec2:${region}:${account}:volume/*]`,
    'A restore creates volumes whose ids do not exist yet; CreateVolume requires the velero.io/restore tag and CreateTags only applies while creating a volume',
  );
  acknowledge(
    `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:kms:${region}:${account}:key/*]`,
    'volumeKmsKeyId names any key of the account; it is used only through EC2 (kms:ViaService), and grants only for AWS resources',
  );
  acknowledge(
    `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ec2:${region}::snapshot/*]`,
    "Any backup's snapshot may be restored; the snapshot ids come from the backup's volumes-info",
  );
  return { restoreVolumes, patchVolumes };
}
