/**
 * The Lifeboat stack: composed from the constructs in ./constructs. Deployable as it is and
 * usable as a construct library.
 */
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { BackupStorage } from './constructs/backup-storage.js';
import { BackupWorkflow } from './constructs/backup-workflow.js';
import { RestoreWorkflow } from './constructs/restore-workflow.js';

export interface LifeboatStackProps extends StackProps {
  /** EKS clusters (same account and region) this deployment backs up, by name. */
  readonly clusters?: readonly string[];
}

export class LifeboatStack extends Stack {
  readonly storage: BackupStorage;
  readonly backup: BackupWorkflow;
  readonly restore: RestoreWorkflow;

  constructor(scope: Construct, id: string, props: LifeboatStackProps = {}) {
    super(scope, id, props);
    this.storage = new BackupStorage(this, 'Storage');
    this.backup = new BackupWorkflow(this, 'Backup', {
      bucket: this.storage.bucket,
      key: this.storage.key,
      clusters: props.clusters ?? [],
    });
    this.restore = new RestoreWorkflow(this, 'Restore', {
      bucket: this.storage.bucket,
      key: this.storage.key,
      clusters: props.clusters ?? [],
    });
    new CfnOutput(this, 'BackupBucketName', { value: this.storage.bucket.bucketName });
    new CfnOutput(this, 'RestoreStateMachineArn', { value: this.restore.stateMachine.stateMachineArn });
    new CfnOutput(this, 'BackupStateMachineArn', { value: this.backup.stateMachine.stateMachineArn });
  }
}
