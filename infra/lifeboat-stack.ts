/**
 * The Lifeboat stack: composed from the constructs in ./constructs. Deployable as it is and
 * usable as a construct library.
 */
import { CfnOutput, type Duration, Stack, type StackProps } from 'aws-cdk-lib';
import type { IPrincipal, IRole } from 'aws-cdk-lib/aws-iam';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import {
  S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY,
  SET_UNIQUE_REPLICATION_ROLE_NAME,
} from 'aws-cdk-lib/cx-api';
import type { Construct } from 'constructs';
import { LifeboatApi } from './constructs/api.js';
import { BackupStorage } from './constructs/backup-storage.js';
import { BackupWorkflow } from './constructs/backup-workflow.js';
import type { DataMover } from './constructs/data-mover.js';
import { DeleteWorkflow } from './constructs/delete-workflow.js';
import { type DrSource, type DrTarget, grantDrTargets, type ReplicaTarget } from './constructs/dr-access.js';
import { DrillWorkflow } from './constructs/drill-workflow.js';
import { OutcomeEvents } from './constructs/outcome-events.js';
import { RestoreWorkflow } from './constructs/restore-workflow.js';
import { Schedules } from './constructs/schedules.js';
import { grantSnapshotCopies, grantVolumeHomeRoles } from './constructs/snapshot-copy-access.js';
import { grantRestoreVolumeRegions, restoreVolumeRegions } from './constructs/volume-regions.js';

export interface LifeboatStackProps extends StackProps {
  /** EKS clusters (same account and region) this deployment backs up, by name. */
  readonly clusters?: readonly string[];
  /** Roles in other accounts the data mover may restore volumes through (cross-account DR). */
  readonly crossAccountRestoreRoles?: readonly string[];
  /** S3 Object Lock on the backup bucket: backups retained until their expiration. */
  readonly objectLock?: { readonly mode: 'GOVERNANCE' | 'COMPLIANCE' };
  /** After how long versions that are no longer current expire (default 30 days). */
  readonly noncurrentVersionExpiration?: Duration;
  /** Only these principals may call the API (its resource policy); IAM decides for each. */
  readonly apiPrincipals?: readonly IPrincipal[];
  /** Send the alarms (failed runs, dead letters, API 5xx) to a new SNS topic. */
  readonly alarmTopic?: boolean;
  /** DR accounts that may restore this deployment's backups: read and decrypt, nothing more. */
  readonly drTargets?: readonly DrTarget[];
  /** Replicate the backups and the repository into a DR account's bucket. */
  readonly replicateTo?: ReplicaTarget;
  /** A DR deployment: the source location (bucket or replica) its restores read, never write. */
  readonly drSource?: DrSource;
  /** When garbage collection runs: an EventBridge Scheduler expression (default `rate(1 hour)`). */
  readonly garbageCollection?: { readonly expression: string; readonly timezone?: string };
  /**
   * The customer KMS keys (ARNs) the backed-up EBS volumes are encrypted with: copySnapshots may
   * grant the DR accounts use of these keys, and of no other.
   */
  readonly snapshotKeys?: readonly string[];
  /**
   * Regions of this account, besides its own, that restores may create volumes in
   * (`volumeRegion` without a role); those of drTargets in this account are added.
   */
  readonly volumeRegions?: readonly string[];
}

export class LifeboatStack extends Stack {
  readonly storage: BackupStorage;
  readonly backup: BackupWorkflow;
  readonly restore: RestoreWorkflow;
  readonly dataMover: DataMover;
  readonly deletion: DeleteWorkflow;
  readonly drill: DrillWorkflow;
  readonly api: LifeboatApi;
  readonly events: OutcomeEvents;
  readonly schedules: Schedules;

  constructor(scope: Construct, id: string, props: LifeboatStackProps = {}) {
    super(scope, id, props);
    // Server access logs delivered through a bucket policy, not the legacy LogDeliveryWrite ACL.
    this.node.setContext(S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY, true);
    // A replication role named per stack: a source and a DR stack may share an account.
    this.node.setContext(SET_UNIQUE_REPLICATION_ROLE_NAME, true);
    this.storage = new BackupStorage(this, 'Storage', {
      ...(props.objectLock ? { objectLock: props.objectLock } : {}),
      ...(props.noncurrentVersionExpiration
        ? { noncurrentVersionExpiration: props.noncurrentVersionExpiration }
        : {}),
      ...(props.replicateTo ? { replicateTo: props.replicateTo } : {}),
    });
    const store = this.storage.store();
    // What reads backups for restores also reads the DR source location, when there is one.
    const readStore = props.drSource ? { ...store, drSource: props.drSource } : store;
    // Volume data moved into the repository and back: one data mover, in the backup workflow's
    // hook runner cluster and subnets, run by both state machines.
    this.backup = new BackupWorkflow(this, 'Backup', {
      store,
      clusters: props.clusters ?? [],
      dataMover: {
        ...(props.crossAccountRestoreRoles
          ? { crossAccountRestoreRoles: props.crossAccountRestoreRoles }
          : {}),
      },
    });
    this.dataMover = this.backup.dataMover;
    this.restore = new RestoreWorkflow(this, 'Restore', {
      store: readStore,
      clusters: props.clusters ?? [],
      dataMover: this.dataMover,
    });
    grantDrTargets({
      bucket: this.storage.bucket,
      storageKey: this.storage.key,
      repositoryKey: this.dataMover.repositoryKey,
      prefix: store.prefix,
      targets: props.drTargets ?? [],
      stack: this,
    });
    // copySnapshots to the DR targets, and restored volumes made through the volume-home roles.
    grantSnapshotCopies({
      role: (this.backup.node.findChild('VolumeOperations') as NodejsFunction).role as IRole,
      targets: props.drTargets ?? [],
      ...(props.snapshotKeys ? { keys: props.snapshotKeys } : {}),
    });
    grantVolumeHomeRoles({
      role: (this.restore.node.findChild('RestoreVolumes') as NodejsFunction).role as IRole,
      roles: props.crossAccountRestoreRoles ?? [],
    });
    // Restores into other regions of this account (volumeRegion without a role).
    grantRestoreVolumeRegions({
      role: (this.restore.node.findChild('RestoreVolumes') as NodejsFunction).role as IRole,
      regions: restoreVolumeRegions({
        stack: this,
        volumeRegions: props.volumeRegions ?? [],
        drTargets: props.drTargets ?? [],
      }),
    });
    this.deletion = new DeleteWorkflow(this, 'Delete', { store, dataMover: this.dataMover });
    // DR drills: the restore workflow run as a nested execution, then checked and reported.
    this.drill = new DrillWorkflow(this, 'Drill', {
      store: readStore,
      clusters: props.clusters ?? [],
      restoreStateMachine: this.restore.stateMachine,
    });
    const stateMachines = {
      backup: this.backup.stateMachine,
      restore: this.restore.stateMachine,
      delete: this.deletion.stateMachine,
    };
    this.api = new LifeboatApi(this, 'Api', {
      store: readStore,
      clusters: props.clusters ?? [],
      stateMachines,
      drillStateMachine: this.drill.stateMachine,
      ...(props.apiPrincipals ? { allowedPrincipals: props.apiPrincipals } : {}),
    });
    // Schedules on EventBridge Scheduler, and garbage collection; the API manages the schedules.
    this.schedules = new Schedules(this, 'Schedules', {
      store,
      stateMachines,
      drillStateMachine: this.drill.stateMachine,
      ...(props.garbageCollection ? { garbageCollection: props.garbageCollection } : {}),
    });
    this.schedules.grantManagement(this.api.node.findChild('Api') as NodejsFunction);
    this.events = new OutcomeEvents(this, 'Events', {
      store,
      stateMachines: Object.values(stateMachines),
      publishedOnly: [this.drill.stateMachine],
      deadLetters: this.backup.deadLetters,
      api: this.api.api,
      ...(props.alarmTopic ? { alarmTopic: true } : {}),
    });
    new CfnOutput(this, 'ApiUrl', { value: this.api.api.url });
    new CfnOutput(this, 'BackupBucketName', { value: this.storage.bucket.bucketName });
    new CfnOutput(this, 'RestoreStateMachineArn', { value: this.restore.stateMachine.stateMachineArn });
    new CfnOutput(this, 'DataMoverTaskDefinitionArn', {
      value: this.dataMover.taskDefinition.taskDefinitionArn,
    });
    new CfnOutput(this, 'BackupStateMachineArn', { value: this.backup.stateMachine.stateMachineArn });
    // What a DR deployment names as `-c lifeboat:drSourceRepositoryKey` to restore moved volumes.
    new CfnOutput(this, 'RepositoryKeyArn', { value: this.dataMover.repositoryKey.keyArn });
  }
}
