/**
 * The restore workflow: its step functions and the state machine built from
 * statemachines/restore.asl.json with typed substitutions. The functions that write into
 * clusters share a role with an EKS access entry on each cluster named. Deployable on its own in
 * a DR account, reading backups from a bucket it is granted.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import { CfnAccessEntry } from 'aws-cdk-lib/aws-eks';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Key } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { grantStorage, ROOT, stepFunction } from './step-function.js';

export const RESTORE_DEFINITION_FILE = join(ROOT, 'statemachines', 'restore.asl.json');

export function restoreSubstitutions(functions: {
  validate: IFunction;
  plan: IFunction;
  phase: IFunction;
  finalize: IFunction;
}): Record<string, string> {
  return {
    ValidateRestoreFunctionArn: functions.validate.functionArn,
    PlanRestoreFunctionArn: functions.plan.functionArn,
    RestorePhaseFunctionArn: functions.phase.functionArn,
    FinalizeRestoreFunctionArn: functions.finalize.functionArn,
  };
}

export interface RestoreWorkflowProps {
  readonly bucket: Bucket;
  readonly key: Key;
  /** EKS clusters this deployment may restore into, by name (same account and region). */
  readonly clusters: readonly string[];
  readonly prefix?: string;
}

export class RestoreWorkflow extends Construct {
  readonly stateMachine: StateMachine;
  readonly clusterWriterRole: Role;

  constructor(scope: Construct, id: string, props: RestoreWorkflowProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const stateMachineName = `${stack.stackName}-restore`;
    this.clusterWriterRole = new Role(this, 'ClusterWriterRole', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: 'Lifeboat functions that restore into Kubernetes clusters',
    });
    const environment = {
      LIFEBOAT_BUCKET: props.bucket.bucketName,
      LIFEBOAT_PREFIX: props.prefix ?? '',
      NODE_OPTIONS: '--enable-source-maps',
    };
    const validate = stepFunction(this, 'ValidateRestore', {
      memoryMb: 512,
      timeout: Duration.seconds(60),
      environment,
    });
    const plan = stepFunction(this, 'PlanRestore', {
      memoryMb: 1769,
      timeout: Duration.minutes(15),
      environment,
      role: this.clusterWriterRole,
    });
    const phase = stepFunction(this, 'RestorePhase', {
      memoryMb: 1024,
      timeout: Duration.minutes(15),
      environment,
      role: this.clusterWriterRole,
    });
    const finalize = stepFunction(this, 'FinalizeRestore', {
      memoryMb: 1024,
      timeout: Duration.minutes(15),
      environment,
    });
    grantStorage(this, {
      bucket: props.bucket,
      key: props.key,
      functions: [validate, plan, phase, finalize],
      invokedByStateMachine: [validate, plan, phase, finalize],
    });
    this.clusterWriterRole.addToPolicy(
      new PolicyStatement({
        actions: ['eks:DescribeCluster'],
        resources: props.clusters.map((c) =>
          stack.formatArn({ service: 'eks', resource: 'cluster', resourceName: c }),
        ),
      }),
    );
    for (const [i, clusterName] of props.clusters.entries()) {
      new CfnAccessEntry(this, `ClusterAccess${i}`, {
        clusterName,
        principalArn: this.clusterWriterRole.roleArn,
        type: 'STANDARD',
        // A restore creates any kind of object, CRDs and RBAC included.
        accessPolicies: [
          {
            policyArn: 'arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy',
            accessScope: { type: 'cluster' },
          },
        ],
      });
    }
    const logs = new LogGroup(this, 'StateMachineLogs', {
      logGroupName: `/aws/vendedlogs/states/${stateMachineName}`,
      retention: RetentionDays.ONE_MONTH,
    });
    this.stateMachine = new StateMachine(this, 'StateMachine', {
      stateMachineName,
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromString(readFileSync(RESTORE_DEFINITION_FILE, 'utf8')),
      definitionSubstitutions: restoreSubstitutions({ validate, plan, phase, finalize }),
      tracingEnabled: true,
      logs: { destination: logs, level: LogLevel.ALL, includeExecutionData: false },
    });
    for (const f of [validate, plan, phase, finalize]) f.grantInvoke(this.stateMachine);
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'X-Ray PutTraceSegments and PutTelemetryRecords have no resource-level permissions',
    });
  }
}
