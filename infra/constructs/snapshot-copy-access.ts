/**
 * What copySnapshots and restores elsewhere need in IAM, granted only for what the stack is told
 * of: VolumeOperations shares the snapshots a backup took with the DR accounts named in
 * `drTargets` (ec2:ModifySnapshotAttribute, only adding those accounts), grants them use of the
 * snapshots' customer keys (kms:CreateGrant, only on the keys named in `snapshotKeys`, only to
 * those accounts: none without them, so an encrypted snapshot's copy then fails naming the
 * refused grant), copies into a target of its own account (ec2:CopySnapshot in the target's
 * region, tagged) and assumes only the targets' roles; RestoreVolumes assumes only the
 * volume-home roles (`crossAccountRestoreRoles`). Never grants sts:AssumeRole on `*`, nor a share
 * or grant to an account not named, nor a grant on a key not named.
 */
import { Stack, Token, Validations } from 'aws-cdk-lib';
import { type IRole, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { DrTarget } from './dr-access.js';

/** Lets VolumeOperations' role share, grant and copy a backup's snapshots to the DR targets. */
export function grantSnapshotCopies(options: {
  role: IRole;
  targets: readonly DrTarget[];
  /** The customer keys the backed-up EBS volumes are encrypted with (key ARNs). */
  keys?: readonly string[];
}): void {
  const { role, targets } = options;
  if (targets.length === 0) return;
  const stack = Stack.of(role);
  const add = (statement: PolicyStatement): void => {
    role.addToPrincipalPolicy(statement);
  };
  const snapshotsIn = (region: string): string =>
    stack.formatArn({ service: 'ec2', region, resource: 'snapshot', resourceName: '*', account: '' });
  const accounts = [...new Set(targets.map((t) => t.account))];
  // Only snapshots a backup took (tagged by Lifeboat) or the EBS CSI driver took (it tags every
  // snapshot `CSIVolumeSnapshotName`, valued after the CSI request, `snapshot-<uid>`: never the
  // VolumeSnapshot's name, so not `velero-*`), and only adding the DR accounts.
  for (const tagged of [
    { Null: { 'aws:ResourceTag/velero.io/backup': 'false' } },
    { Null: { 'aws:ResourceTag/CSIVolumeSnapshotName': 'false' } },
  ])
    add(
      new PolicyStatement({
        actions: ['ec2:ModifySnapshotAttribute'],
        resources: [snapshotsIn(stack.region)],
        conditions: { ...tagged, 'ForAllValues:StringEquals': { 'ec2:Add/userId': accounts } },
      }),
    );
  const keys = [...new Set(options.keys ?? [])];
  // Only the keys the snapshots are encrypted with, only to the DR accounts.
  if (keys.length > 0)
    add(
      new PolicyStatement({
        actions: ['kms:CreateGrant'],
        resources: keys,
        conditions: {
          StringEquals: {
            'kms:GranteePrincipal': accounts.map((a) => `arn:${stack.partition}:iam::${a}:root`),
          },
        },
      }),
    );
  const roles = targets.flatMap((t) => (t.roleArn ? [t.roleArn] : []));
  if (roles.length > 0) add(new PolicyStatement({ actions: ['sts:AssumeRole'], resources: roles }));
  // A target in this account has no role: the copy is made with this role, in its region.
  const ownRegions = [
    ...new Set(targets.filter((t) => !t.roleArn && t.account === stack.account).map((t) => t.region)),
  ];
  if (ownRegions.length > 0) grantOwnCopies({ role, add, stack, regions: ownRegions, snapshotsIn });
  acknowledgeCopies({ role, stack, regions: ownRegions });
}

function grantOwnCopies(options: {
  role: IRole;
  add: (statement: PolicyStatement) => void;
  stack: Stack;
  regions: readonly string[];
  snapshotsIn: (region: string) => string;
}): void {
  const { add, stack, regions, snapshotsIn } = options;
  add(
    new PolicyStatement({
      // The source: a backup's snapshot, Lifeboat's or the EBS CSI driver's, by its id.
      actions: ['ec2:CopySnapshot'],
      resources: [snapshotsIn(stack.region)],
    }),
  );
  add(
    new PolicyStatement({
      actions: ['ec2:CopySnapshot'],
      resources: regions.map(snapshotsIn),
      conditions: { Null: { 'aws:RequestTag/velero.io/backup': 'false' } },
    }),
  );
  add(
    new PolicyStatement({
      actions: ['ec2:CreateTags'],
      resources: regions.map(snapshotsIn),
      conditions: { StringEquals: { 'ec2:CreateAction': 'CopySnapshot' } },
    }),
  );
}

function acknowledgeCopies(options: { role: IRole; stack: Stack; regions: readonly string[] }): void {
  const { role, stack } = options;
  const acknowledge = (id: string, reason: string): void => Validations.of(role).acknowledge({ id, reason });
  for (const r of [stack.region, ...options.regions])
    acknowledge(
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ec2:${Token.isUnresolved(r) ? '<AWS::Region>' : r}::snapshot/*]`,
      "A backup's snapshots are shared and copied by id from its volumes-info: only tagged ones, only to the DR accounts named",
    );
}

/** Lets RestoreVolumes' role create volumes in the volume-home accounts, through their roles only. */
export function grantVolumeHomeRoles(options: { role: IRole; roles: readonly string[] }): void {
  if (options.roles.length === 0) return;
  options.role.addToPrincipalPolicy(
    new PolicyStatement({ actions: ['sts:AssumeRole'], resources: [...options.roles] }),
  );
}
