/**
 * The Lifeboat stack: composed from the constructs in ./constructs. Deployable as it is and
 * usable as a construct library.
 */
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { BackupStorage } from './constructs/backup-storage.js';

export type LifeboatStackProps = StackProps;

export class LifeboatStack extends Stack {
  readonly storage: BackupStorage;

  constructor(scope: Construct, id: string, props: LifeboatStackProps = {}) {
    super(scope, id, props);
    this.storage = new BackupStorage(this, 'Storage');
    new CfnOutput(this, 'BackupBucketName', { value: this.storage.bucket.bucketName });
  }
}
