/**
 * The backup's volume steps: the VolumeOperations function (re-entrant, one look per call at the
 * EBS snapshots and CSI VolumeSnapshots the workers started) and the EC2 permissions of the
 * cluster-reading role the workers and VolumeOperations share. EC2 is granted as narrowly as it
 * allows: snapshots may only be created carrying the `velero.io/backup` tag, tags only while
 * creating a snapshot, and the two Describe calls, which have no resource-level permissions, on
 * `*`. Creating CSI VolumeSnapshots needs Kubernetes write access the reading role's EKS access
 * policy does not give: its access entry carries VOLUME_SNAPSHOT_GROUP for the cluster's RBAC to
 * bind (docs/backup-volumes.md).
 */
import { Duration, Stack, Token, Validations } from 'aws-cdk-lib';
import { PolicyStatement, type Role } from 'aws-cdk-lib/aws-iam';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { Construct } from 'constructs';
import { stepFunction } from './step-function.js';
import type { BackupStore } from './storage-access.js';

/** The Kubernetes group of the backup's EKS access entry that a cluster binds to the snapshot API. */
export const VOLUME_SNAPSHOT_GROUP = 'lifeboat:volume-snapshots';

export function backupVolumeFunctions(
  scope: Construct,
  options: { environment: Record<string, string>; store: BackupStore; clusters: readonly string[] },
): { volumeOperations: NodejsFunction } {
  // Re-entrant: one call looks at every operation once, the state machine waits between calls.
  // Reads VolumeSnapshots and retains their contents (CSI); describes EBS snapshots.
  const volumeOperations = stepFunction(scope, 'VolumeOperations', {
    memoryMb: 512,
    timeout: Duration.minutes(5),
    environment: options.environment,
    store: options.store,
    access: { writes: ['backupWork', 'backupClaims'] },
    cluster: {
      clusters: options.clusters,
      accessPolicy: 'AmazonEKSAdminViewPolicy',
      kubernetesGroups: [VOLUME_SNAPSHOT_GROUP],
    },
  });
  const role = volumeOperations.role as Role;
  role.addToPrincipalPolicy(
    new PolicyStatement({ actions: ['ec2:DescribeVolumes', 'ec2:DescribeSnapshots'], resources: ['*'] }),
  );
  grantIncrementalBaseDeletion(role);
  const stack = Stack.of(scope);
  const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
  Validations.of(role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ec2:${region}::snapshot/*]`,
    reason:
      'VolumeOperations deletes only the superseded incremental bases: snapshots tagged by a backup (or by the EBS CSI driver for a backup’s VolumeSnapshot)',
  });
  return { volumeOperations };
}

export function grantEbsSnapshots(role: Role): void {
  const stack = Stack.of(role);
  const volumes = stack.formatArn({ service: 'ec2', resource: 'volume', resourceName: '*' });
  // EC2 snapshot ARNs carry no account.
  const snapshots = stack.formatArn({ service: 'ec2', resource: 'snapshot', resourceName: '*', account: '' });
  role.addToPrincipalPolicy(new PolicyStatement({ actions: ['ec2:CreateSnapshot'], resources: [volumes] }));
  role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['ec2:CreateSnapshot'],
      resources: [snapshots],
      conditions: { Null: { 'aws:RequestTag/velero.io/backup': 'false' } },
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['ec2:CreateTags'],
      resources: [snapshots],
      conditions: { StringEquals: { 'ec2:CreateAction': 'CreateSnapshot' } },
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({ actions: ['ec2:DescribeVolumes', 'ec2:DescribeSnapshots'], resources: ['*'] }),
  );
  const acknowledge = (id: string, reason: string): void => Validations.of(role).acknowledge({ id, reason });
  acknowledge(
    'AwsSolutions-IAM5[Resource::*]',
    'ec2:DescribeVolumes and ec2:DescribeSnapshots have no resource-level permissions; X-Ray PutTraceSegments and PutTelemetryRecords neither',
  );
  // cdk-nag names a resource as the template has it: pseudo parameters for an environment-agnostic stack.
  const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
  const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
  acknowledge(
    `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ec2:${region}:${account}:volume/*]`,
    'A backup snapshots the EBS volume behind any PV of the cluster; the volume ids come from the PVs',
  );
  acknowledge(
    `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ec2:${region}::snapshot/*]`,
    'A backup creates snapshots whose ids do not exist yet; CreateSnapshot requires the velero.io/backup tag and CreateTags only applies while creating a snapshot',
  );
}

/**
 * VolumeOperations deletes the EBS snapshot a data-moved volume kept as its incremental base once
 * a later backup of the volume moved its data (docs/backup-volumes.md): only snapshots a backup
 * took (tagged `velero.io/backup`) or the EBS CSI driver took for a VolumeSnapshot a backup made
 * (`CSIVolumeSnapshotName` `velero-*`). On the shared ClusterReaderRole, as VolumeOperations runs
 * with it (it needs the role's cluster access).
 */
export function grantIncrementalBaseDeletion(role: Role): void {
  const stack = Stack.of(role);
  const snapshots = stack.formatArn({ service: 'ec2', resource: 'snapshot', resourceName: '*', account: '' });
  const conditions = [
    { Null: { 'aws:ResourceTag/velero.io/backup': 'false' } },
    // The driver tags with the VolumeSnapshot's name; a backup's are `velero-<pvc>-<hash>`
    // (functions/backup-item-block/volume-snapshots.ts), not the cluster's other VolumeSnapshots.
    { StringLike: { 'aws:ResourceTag/CSIVolumeSnapshotName': 'velero-*' } },
  ];
  for (const condition of conditions)
    role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['ec2:DeleteSnapshot'], resources: [snapshots], conditions: condition }),
    );
}
