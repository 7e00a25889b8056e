/**
 * What tells a team that a run ended, and what wakes someone up. PublishOutcome is the target of
 * a rule on Step Functions' "Execution Status Change" events of the backup, restore and delete
 * state machines, and the DR drill's (every end: succeeded, failed, timed out, aborted) and publishes Lifeboat's own
 * event to EventBridge (`source: lifeboat`, `detail-type: Backup Completed|PartiallyFailed|
 * Failed`, …) with the run's metrics (EMF). CloudWatch alarms watch failed executions, the
 * ItemBlock dead-letter queue and the API's 5xx answers, each sent to an SNS topic when one is
 * asked for (KMS-encrypted, TLS only).
 */
import { Duration, Stack } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Rule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { acknowledgeStepFunctions, stepFunction } from './step-function.js';
import type { BackupStore } from './storage-access.js';

export interface OutcomeEventsProps {
  readonly store: BackupStore;
  readonly stateMachines: readonly StateMachine[];
  /** State machines whose ends are published with no alarm of their own (a drill's report says). */
  readonly publishedOnly?: readonly StateMachine[];
  readonly deadLetters: Queue;
  readonly api: RestApi;
  /** Send the alarms to a new SNS topic (subscribe to it after deploying). */
  readonly alarmTopic?: boolean;
}

export class OutcomeEvents extends Construct {
  readonly rule: Rule;
  readonly alarms: Alarm[];
  readonly topic?: Topic;

  constructor(scope: Construct, id: string, props: OutcomeEventsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const { store } = props;
    const publish = stepFunction(this, 'PublishOutcome', {
      memoryMb: 256,
      timeout: Duration.seconds(60),
      store,
      access: {},
      environment: {
        LIFEBOAT_BUCKET: store.bucket.bucketName,
        LIFEBOAT_PREFIX: store.prefix,
        NODE_OPTIONS: '--enable-source-maps',
      },
    });
    publish.addToRolePolicy(
      new PolicyStatement({
        actions: ['events:PutEvents'],
        resources: [stack.formatArn({ service: 'events', resource: 'event-bus', resourceName: 'default' })],
      }),
    );
    acknowledgeStepFunctions(this, { store, invokedByStateMachine: [] });
    this.rule = new Rule(this, 'ExecutionEnded', {
      description: 'Every end of a Lifeboat backup, restore, deletion or DR drill: PublishOutcome says so',
      eventPattern: {
        source: ['aws.states'],
        detailType: ['Step Functions Execution Status Change'],
        detail: {
          status: ['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED'],
          stateMachineArn: [...props.stateMachines, ...(props.publishedOnly ?? [])].map(
            (m) => m.stateMachineArn,
          ),
        },
      },
      targets: [new LambdaFunction(publish, { retryAttempts: 8, maxEventAge: Duration.hours(2) })],
    });
    this.alarms = this.alarmsOf(props);
    if (props.alarmTopic) {
      this.topic = new Topic(this, 'AlarmTopic', { masterKey: store.key, enforceSSL: true });
      for (const alarm of this.alarms) alarm.addAlarmAction(new SnsAction(this.topic));
    }
  }

  private alarmsOf(props: OutcomeEventsProps): Alarm[] {
    const above = (id: string, options: { metric: Alarm['metric']; description: string }) =>
      new Alarm(this, id, {
        metric: options.metric,
        threshold: 0,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        alarmDescription: options.description,
      });
    const period = Duration.minutes(5);
    return [
      ...props.stateMachines.map((machine, i) =>
        above(`FailedExecutions${i}`, {
          metric: machine.metricFailed({ period, statistic: 'Sum' }),
          description: 'A Lifeboat workflow failed as a whole (its event says why)',
        }),
      ),
      above('DeadLetters', {
        metric: props.deadLetters.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }),
        description: 'ItemBlocks a worker could not finish are waiting in the dead-letter queue',
      }),
      above('Api5xx', {
        metric: props.api.metricServerError({ period, statistic: 'Sum' }),
        description: 'The Lifeboat API answered 5xx',
      }),
    ];
  }
}
