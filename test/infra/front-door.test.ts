/**
 * The service's front door in the synthesized stack: the API authorizes every method with IAM
 * (SigV4), logs every request, throttles, answers its own refusals with the API's JSON error
 * body, and may be restricted to named principals; every end of a workflow reaches PublishOutcome;
 * alarms watch failed executions, dead letters and API 5xx, and go to an SNS topic when asked.
 */
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AccountPrincipal } from 'aws-cdk-lib/aws-iam';
import { describe, expect, it } from 'vitest';
import { LifeboatStack, type LifeboatStackProps } from '../../infra/lifeboat-stack.js';

function synth(props: Partial<LifeboatStackProps> = {}): Template {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new LifeboatStack(app, 'Lifeboat', {
    env: { account: '123456789012', region: 'us-east-1' },
    clusters: ['prod-a'],
    ...props,
  });
  return Template.fromStack(stack);
}

describe('the front door of the stack', () => {
  const template = synth();

  it('authorizes every method of the API with IAM, each a proxy to the Api function', () => {
    const methods = Object.values(template.findResources('AWS::ApiGateway::Method'));
    expect(methods.length).toBeGreaterThanOrEqual(2);
    for (const m of methods) {
      expect(m.Properties.AuthorizationType).toBe('AWS_IAM');
      expect(m.Properties.Integration.Type).toBe('AWS_PROXY');
    }
    const api = Object.values(template.findResources('AWS::Lambda::Function')).find((f) =>
      JSON.stringify(f.Properties.FunctionName).includes('-Api'),
    );
    expect(api?.Properties.Environment.Variables).toMatchObject({
      LIFEBOAT_CLUSTERS: 'prod-a',
      LIFEBOAT_BACKUP_STATE_MACHINE_ARN: expect.anything(),
      LIFEBOAT_RESTORE_STATE_MACHINE_ARN: expect.anything(),
      LIFEBOAT_DELETE_STATE_MACHINE_ARN: expect.anything(),
    });
  });

  it('logs every request to an encrypted log group and throttles the stage', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      AccessLogSetting: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('requestId') },
      MethodSettings: Match.arrayWith([
        Match.objectLike({
          HttpMethod: '*',
          ResourcePath: '/*',
          ThrottlingRateLimit: 50,
          ThrottlingBurstLimit: 100,
        }),
      ]),
      TracingEnabled: true,
    });
  });

  it('answers API Gateway’s own 4xx and 5xx with the API’s JSON error body', () => {
    for (const type of ['DEFAULT_4XX', 'DEFAULT_5XX'])
      template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
        ResponseType: type,
        ResponseTemplates: { 'application/json': Match.stringLikeRegexp('"code":.*"message":') },
      });
  });

  it('has no resource policy unless principals are named, then lets only them invoke', () => {
    const open = Object.values(template.findResources('AWS::ApiGateway::RestApi'))[0];
    expect(open?.Properties.Policy).toBeUndefined();
    const closed = synth({ apiPrincipals: [new AccountPrincipal('210987654321')] });
    const policy = Object.values(closed.findResources('AWS::ApiGateway::RestApi'))[0]?.Properties.Policy;
    expect(JSON.stringify(policy)).toContain('execute-api:Invoke');
    expect(JSON.stringify(policy)).toContain('210987654321');
  });

  it('sends every end of the backup, restore, delete and drill workflows to PublishOutcome', () => {
    const rules = Object.values(template.findResources('AWS::Events::Rule'));
    const ended = rules.find((r) => r.Properties.EventPattern?.source?.[0] === 'aws.states');
    expect(ended?.Properties.EventPattern['detail-type']).toEqual(['Step Functions Execution Status Change']);
    expect(ended?.Properties.EventPattern.detail.status.sort()).toEqual([
      'ABORTED',
      'FAILED',
      'SUCCEEDED',
      'TIMED_OUT',
    ]);
    expect(ended?.Properties.EventPattern.detail.stateMachineArn).toHaveLength(4);
    expect(JSON.stringify(ended?.Properties.Targets)).toContain('PublishOutcome');
  });

  it('alarms on failed executions of each workflow, dead letters and API 5xx, with no action unless asked', () => {
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm'));
    const metrics = alarms.map((a) => `${a.Properties.Namespace}/${a.Properties.MetricName}`).sort();
    expect(metrics).toEqual([
      'AWS/ApiGateway/5XXError',
      'AWS/SQS/ApproximateNumberOfMessagesVisible',
      'AWS/States/ExecutionsFailed',
      'AWS/States/ExecutionsFailed',
      'AWS/States/ExecutionsFailed',
    ]);
    for (const a of alarms) expect(a.Properties.AlarmActions).toBeUndefined();
    const notified = synth({ alarmTopic: true });
    const topics = Object.keys(notified.findResources('AWS::SNS::Topic'));
    expect(topics).toHaveLength(1);
    for (const a of Object.values(notified.findResources('AWS::CloudWatch::Alarm')))
      expect(a.Properties.AlarmActions).toEqual([{ Ref: topics[0] }]);
  });
});
