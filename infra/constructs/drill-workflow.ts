/**
 * The DR drill workflow: statemachines/drill.asl.json with its four steps. It runs the restore
 * workflow as a nested execution (startExecution.sync:2), so its role may start the restore state
 * machine and describe and stop only that machine's executions, with the managed EventBridge rule
 * Step Functions keeps for `.sync`. StartDrill claims the drill's name and writes its report
 * InProgress; the two checks read the target cluster (view, Secrets included, never a write) and
 * write the drill's working data; FinishDrill writes the report. ClearDrillNamespaces, before the
 * restore, views the target cluster and may delete namespaces only (DRILL_NAMESPACES_GROUP);
 * it writes nothing in the store.
 */
import { join } from 'node:path';
import { ArnFormat, Duration, Stack, Token, Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import {
  acknowledgeStepFunctions,
  ROOT,
  type StepFunctionOptions,
  stepFunction,
  workflowStateMachine,
} from './step-function.js';
import type { BackupStore } from './storage-access.js';

export const DRILL_DEFINITION_FILE = join(ROOT, 'statemachines', 'drill.asl.json');

/** The rule Step Functions manages to learn of a `.sync` nested execution's end. */
export const SYNC_EXECUTION_RULE = 'StepFunctionsGetEventsForStepFunctionsExecutionRule';

/** The Kubernetes group that may delete namespaces (bound by infra/kubernetes/rbac.yaml). */
export const DRILL_NAMESPACES_GROUP = 'lifeboat:drill-namespaces';

export interface DrillWorkflowProps {
  readonly store: BackupStore;
  /** The clusters drills restore into and check (those the restore workflow reaches). */
  readonly clusters: readonly string[];
  /** The restore workflow's state machine, run by every drill. */
  readonly restoreStateMachine: StateMachine;
}

export class DrillWorkflow extends Construct {
  readonly stateMachine: StateMachine;

  constructor(scope: Construct, id: string, props: DrillWorkflowProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const { store, clusters } = props;
    const environment = {
      LIFEBOAT_BUCKET: store.bucket.bucketName,
      LIFEBOAT_PREFIX: store.prefix,
      NODE_OPTIONS: '--enable-source-maps',
    };
    const fn = (name: string, options: Omit<StepFunctionOptions, 'environment' | 'store'>) =>
      stepFunction(this, name, { ...options, environment, store });
    const reads = { clusters, accessPolicy: 'AmazonEKSAdminViewPolicy' } as const;
    const startDrill = fn('StartDrill', {
      memoryMb: 512,
      timeout: Duration.seconds(60),
      access: { writes: ['drillClaims', 'drillReports'] },
    });
    const checkItems = fn('CheckDrillItems', {
      memoryMb: 1024,
      timeout: Duration.minutes(15),
      access: { writes: ['drillWork'] },
      cluster: reads,
    });
    const checkReadiness = fn('CheckDrillReadiness', {
      memoryMb: 512,
      timeout: Duration.seconds(60),
      access: { writes: ['drillWork'] },
      cluster: reads,
    });
    const finishDrill = fn('FinishDrill', {
      memoryMb: 512,
      timeout: Duration.minutes(2),
      access: { writes: ['drillReports'] },
    });
    // An earlier drill's target namespaces deleted before the restore: view, and delete namespaces.
    const clearNamespaces = fn('ClearDrillNamespaces', {
      memoryMb: 512,
      timeout: Duration.seconds(60),
      access: {},
      cluster: { ...reads, kubernetesGroups: [DRILL_NAMESPACES_GROUP] },
    });
    const invoked = [startDrill, checkItems, checkReadiness, finishDrill, clearNamespaces];
    acknowledgeStepFunctions(this, { store, invokedByStateMachine: invoked });
    this.stateMachine = workflowStateMachine(this, {
      name: `${stack.stackName}-drill`,
      definitionFile: DRILL_DEFINITION_FILE,
      substitutions: {
        StartDrillFunctionArn: startDrill.functionArn,
        CheckDrillItemsFunctionArn: checkItems.functionArn,
        CheckDrillReadinessFunctionArn: checkReadiness.functionArn,
        FinishDrillFunctionArn: finishDrill.functionArn,
        ClearDrillNamespacesFunctionArn: clearNamespaces.functionArn,
        RestoreStateMachineArn: props.restoreStateMachine.stateMachineArn,
      },
      invokes: invoked,
      logKey: store.key,
    });
    this.grantNestedRestore(props.restoreStateMachine);
  }

  /** startExecution.sync:2 of the restore machine: start it, follow and stop its executions only. */
  private grantNestedRestore(restore: StateMachine): void {
    const stack = Stack.of(this);
    restore.grantStartExecution(this.stateMachine);
    const restoreName = `${stack.stackName}-restore`;
    this.stateMachine.addToRolePolicy(
      new PolicyStatement({
        actions: ['states:DescribeExecution', 'states:StopExecution'],
        resources: [
          stack.formatArn({
            service: 'states',
            resource: 'execution',
            resourceName: `${restoreName}:*`,
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        ],
      }),
    );
    this.stateMachine.addToRolePolicy(
      new PolicyStatement({
        actions: ['events:PutTargets', 'events:PutRule', 'events:DescribeRule'],
        resources: [
          stack.formatArn({ service: 'events', resource: 'rule', resourceName: SYNC_EXECUTION_RULE }),
        ],
      }),
    );
    const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
    const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
    Validations.of(this).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:${region}:${account}:execution:${restoreName}:*]`,
      reason: 'The drill follows and stops the restore executions it starts, named after the drill',
    });
  }
}
