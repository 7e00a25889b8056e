/**
 * The restore's volume steps: RestoreVolumes (re-creates EBS volumes from native snapshots, so it
 * reaches EC2 and nothing in the cluster) and PatchProvisionedVolumes (patches re-provisioned
 * PVs, so it shares the cluster-writing role). EC2 is granted as narrowly as EC2 allows: volumes
 * may only be created carrying the restore tag, tags only while creating a volume, and the two
 * Describe calls, which have no resource-level permissions, on `*`. A volume encrypted with the
 * request's `volumeKmsKeyId` needs the key through EC2 only (`kms:ViaService`), grants only for
 * AWS resources.
 */
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { Construct } from 'constructs';
import { stepFunction } from './step-function.js';
import type { BackupStore } from './storage-access.js';
import { grantRestoreVolumeRegions } from './volume-regions.js';

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
  restoreVolumes.addToRolePolicy(
    new PolicyStatement({ actions: ['ec2:DescribeVolumes', 'ec2:DescribeSnapshots'], resources: ['*'] }),
  );
  const role = restoreVolumes.role;
  if (!role) throw new Error('RestoreVolumes has no role');
  Validations.of(role).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason: 'ec2:DescribeVolumes and ec2:DescribeSnapshots have no resource-level permissions',
  });
  // Its own region here; the other regions it may restore into are added by the stack.
  grantRestoreVolumeRegions({ role, regions: [stack.region] });
  return { restoreVolumes, patchVolumes };
}
