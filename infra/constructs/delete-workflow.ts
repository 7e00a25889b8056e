/**
 * The delete workflow: statemachines/delete.asl.json with its two steps and the data mover's
 * garbage collection. DeleteBackup is the only role in the stack that may delete under
 * `backups/` (a backup's objects), its claim and its manifests in the repository, and EBS
 * snapshots a backup tagged; RecordBackupDeletion records Velero's DeleteBackupRequest Processed.
 * Nothing here may delete object versions: those expire by the bucket's lifecycle rule.
 */
import { join } from 'node:path';
import { Duration, Stack, Token, Validations } from 'aws-cdk-lib';
import { PolicyStatement, type Role } from 'aws-cdk-lib/aws-iam';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { grantIncrementalBaseDeletion } from './backup-volumes.js';
import type { DataMover } from './data-mover.js';
import { acknowledgeStepFunctions, ROOT, stepFunction, workflowStateMachine } from './step-function.js';
import { areaObjects, type BackupStore } from './storage-access.js';

export const DELETE_DEFINITION_FILE = join(ROOT, 'statemachines', 'delete.asl.json');

export interface DeleteWorkflowProps {
  readonly store: BackupStore;
  /** The data mover whose gc job collects the repository's garbage after a deletion. */
  readonly dataMover: DataMover;
}

export class DeleteWorkflow extends Construct {
  readonly stateMachine: StateMachine;

  constructor(scope: Construct, id: string, props: DeleteWorkflowProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const { store, dataMover } = props;
    const environment = {
      LIFEBOAT_BUCKET: store.bucket.bucketName,
      LIFEBOAT_PREFIX: store.prefix,
      LIFEBOAT_REPOSITORY_KEY: dataMover.repositoryKey.keyArn,
      NODE_OPTIONS: '--enable-source-maps',
    };
    const deleteBackup = stepFunction(this, 'DeleteBackup', {
      memoryMb: 512,
      timeout: Duration.minutes(15),
      environment,
      store,
      access: {
        writes: ['deleteRequests', 'deletions'],
        deletes: ['backups', 'backupClaims', 'deletions', 'repository'],
      },
    });
    // Snapshots a backup took (tagged velero.io/backup), found by their tag.
    grantIncrementalBaseDeletion(deleteBackup.role as Role);
    deleteBackup.addToRolePolicy(
      new PolicyStatement({ actions: ['ec2:DescribeSnapshots'], resources: ['*'] }),
    );
    // A backup under Object Lock is refused before anything goes (BackupRetained).
    if (store.objectLockMode)
      deleteBackup.addToRolePolicy(
        new PolicyStatement({
          actions: ['s3:GetObjectRetention'],
          resources: [areaObjects(store, 'backups')],
        }),
      );
    const recordDeletion = stepFunction(this, 'RecordBackupDeletion', {
      memoryMb: 256,
      timeout: Duration.minutes(2),
      environment,
      store,
      access: { writes: ['deleteRequests', 'generations'] },
    });
    const invoked = [deleteBackup, recordDeletion];
    acknowledgeStepFunctions(this, { store, invokedByStateMachine: invoked });
    const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
    Validations.of(this).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ec2:${region}::snapshot/*]`,
      reason:
        'DeleteBackup deletes only snapshots a backup tagged (velero.io/backup, or a backup’s CSI snapshot)',
    });
    this.stateMachine = workflowStateMachine(this, {
      name: `${stack.stackName}-delete`,
      definitionFile: DELETE_DEFINITION_FILE,
      substitutions: {
        ...dataMover.substitutions(),
        DeleteBackupFunctionArn: deleteBackup.functionArn,
        RecordBackupDeletionFunctionArn: recordDeletion.functionArn,
      },
      invokes: invoked,
      logKey: store.key,
    });
    dataMover.grantRun(this.stateMachine);
  }
}
