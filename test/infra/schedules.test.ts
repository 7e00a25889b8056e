/**
 * Schedules in the synthesized stack: the schedule group; FireSchedule and CollectGarbage on
 * Node.js 22 with roles of their own that delete nothing; the GC schedule (hourly unless told
 * otherwise, no flexible window, retries and dead letters) invoking CollectGarbage; Scheduler's
 * roles, each assumable by Scheduler for this account's group only and allowed to invoke only its
 * own target; the API's grants to manage schedules in the group and pass only FireSchedule's role.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { LifeboatStack, type LifeboatStackProps } from '../../infra/lifeboat-stack.js';
import { iamMatch } from '../rehearsal/iam.js';

interface Statement {
  readonly Effect: string;
  readonly Action: string | string[];
  readonly Resource: unknown;
  readonly Condition?: unknown;
}

type Resources = Record<string, { Properties: Record<string, unknown> & Record<string, never> }>;

function synth(props: Partial<LifeboatStackProps> = {}): Template {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  return Template.fromStack(
    new LifeboatStack(app, 'Lifeboat', {
      env: { account: '123456789012', region: 'us-east-1' },
      clusters: ['prod-a'],
      ...props,
    }),
  );
}

const list = <T>(x: T | T[]): T[] => (Array.isArray(x) ? x : [x]);

/** The statements of a role's policies, by the role's logical id. */
function statementsOf(template: Template, roleId: string): Statement[] {
  return Object.values(template.findResources('AWS::IAM::Policy') as Resources)
    .filter((p) => (p.Properties.Roles as unknown as { Ref: string }[]).some((r) => r.Ref === roleId))
    .flatMap((p) => (p.Properties.PolicyDocument as unknown as { Statement: Statement[] }).Statement);
}

function functionNamed(template: Template, name: string): [string, Resources[string]] {
  const found = Object.entries(template.findResources('AWS::Lambda::Function') as Resources).find(
    ([, f]) => JSON.stringify(f.Properties.FunctionName) === JSON.stringify(`Lifeboat-${name}`),
  );
  if (!found) throw new Error(`no function Lifeboat-${name}`);
  return found;
}

const roleOf = (fn: Resources[string]): string =>
  (fn.Properties.Role as unknown as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];

const grants = (statements: readonly Statement[], action: string): Statement[] =>
  statements.filter(
    (s) => s.Effect === 'Allow' && list(s.Action).some((a) => iamMatch(a, action, { caseless: true })),
  );

describe('schedules in the stack', () => {
  const template = synth();
  const schedules = Object.values(template.findResources('AWS::Scheduler::Schedule') as Resources);
  const [garbage] = schedules;
  const [fireId, fire] = functionNamed(template, 'FireSchedule');
  const [collectId, collect] = functionNamed(template, 'CollectGarbage');

  it('has one schedule group, and the GC schedule in it, hourly in UTC, invoking CollectGarbage with retries and dead letters', () => {
    const groups = template.findResources('AWS::Scheduler::ScheduleGroup') as Resources;
    expect(Object.values(groups).map((g) => g.Properties.Name)).toEqual(['Lifeboat-schedules']);
    expect(schedules).toHaveLength(1);
    expect(garbage?.Properties).toMatchObject({
      GroupName: { Ref: Object.keys(groups)[0] },
      ScheduleExpression: 'rate(1 hour)',
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
      Target: {
        Arn: { 'Fn::GetAtt': [collectId, 'Arn'] },
        Input: '{"dryRun":false}',
        RetryPolicy: { MaximumEventAgeInSeconds: 3600, MaximumRetryAttempts: 10 },
        DeadLetterConfig: { Arn: expect.anything() },
      },
    });
  });

  it('runs garbage collection on the schedule a deployment asks for', () => {
    const daily = synth({ garbageCollection: { expression: 'cron(0 4 * * ? *)', timezone: 'Europe/Paris' } });
    const [schedule] = Object.values(daily.findResources('AWS::Scheduler::Schedule') as Resources);
    expect(schedule?.Properties).toMatchObject({
      ScheduleExpression: 'cron(0 4 * * ? *)',
      ScheduleExpressionTimezone: 'Europe/Paris',
    });
  });

  it('runs FireSchedule and CollectGarbage on Node.js 22, each with a role of its own that deletes no object', () => {
    for (const fn of [fire, collect]) {
      expect(fn.Properties.Runtime).toBe('nodejs22.x');
      expect(fn.Properties.Environment).toMatchObject({
        Variables: {
          LIFEBOAT_BACKUP_STATE_MACHINE_ARN: expect.anything(),
          LIFEBOAT_DELETE_STATE_MACHINE_ARN: expect.anything(),
        },
      });
      expect(grants(statementsOf(template, roleOf(fn)), 's3:DeleteObject')).toEqual([]);
    }
    expect(roleOf(fire)).not.toBe(roleOf(collect));
    // FireSchedule starts backups only; CollectGarbage starts deletions only.
    const starts = (fn: Resources[string]) =>
      grants(statementsOf(template, roleOf(fn)), 'states:StartExecution').flatMap((s) => list(s.Resource));
    expect(JSON.stringify(starts(fire))).toMatch(/Backup/);
    expect(JSON.stringify(starts(fire))).not.toMatch(/Delete/);
    expect(JSON.stringify(starts(collect))).toMatch(/Delete/);
    expect(JSON.stringify(starts(collect))).not.toMatch(/Backup/);
  });

  it('lets Scheduler assume each target role for this account’s group only, to invoke that one function', () => {
    const roles = template.findResources('AWS::IAM::Role') as Resources;
    const schedulerRoles = Object.entries(roles).filter(([, r]) =>
      JSON.stringify(r.Properties.AssumeRolePolicyDocument).includes('scheduler.amazonaws.com'),
    );
    expect(schedulerRoles).toHaveLength(2);
    for (const [id, role] of schedulerRoles) {
      const trust = (role.Properties.AssumeRolePolicyDocument as unknown as { Statement: Statement[] })
        .Statement;
      expect(trust).toEqual([
        expect.objectContaining({
          Condition: {
            StringEquals: { 'aws:SourceAccount': '123456789012' },
            ArnLike: { 'aws:SourceArn': expect.anything() },
          },
        }),
      ]);
      const statements = statementsOf(template, id);
      const invoked = grants(statements, 'lambda:InvokeFunction').flatMap((s) => list(s.Resource));
      expect(invoked).toHaveLength(1);
      const others = statements.filter((s) =>
        list(s.Action).some(
          (a) => !/^(lambda:InvokeFunction|sqs:SendMessage|sqs:GetQueue.*|kms:.*)$/.test(a),
        ),
      );
      expect(others).toEqual([]);
    }
    const invokedBy = (fnId: string) =>
      schedulerRoles.filter(([id]) =>
        JSON.stringify(grants(statementsOf(template, id), 'lambda:InvokeFunction')).includes(fnId),
      );
    expect(invokedBy(fireId)).toHaveLength(1);
    expect(invokedBy(collectId)).toHaveLength(1);
    expect(JSON.stringify(garbage?.Properties.Target)).toContain((invokedBy(collectId)[0] ?? [''])[0]);
  });

  it('lets the API manage schedules in the group only, and pass only FireSchedule’s role, to Scheduler', () => {
    const [, api] = functionNamed(template, 'Api');
    const statements = statementsOf(template, roleOf(api));
    for (const action of ['CreateSchedule', 'UpdateSchedule', 'DeleteSchedule', 'GetSchedule']) {
      const resources = grants(statements, `scheduler:${action}`).flatMap((s) => list(s.Resource));
      expect(JSON.stringify(resources)).toMatch(
        /:schedule\/",\{"Ref":"SchedulesGroup[0-9A-F]{8}"\},"\/\*"\]/,
      );
      expect(resources.length).toBe(1);
    }
    const passes = grants(statements, 'iam:PassRole');
    expect(passes).toHaveLength(1);
    expect(passes[0]?.Condition).toEqual({
      StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' },
    });
    const fireRole = grants(statementsOf(template, roleOf(fire)), 'lambda:InvokeFunction');
    expect(fireRole).toEqual([]);
    const passed = JSON.stringify(passes[0]?.Resource);
    const fireSchedulerRole = Object.keys(template.findResources('AWS::IAM::Role')).find((id) =>
      id.startsWith('SchedulesFireScheduleSchedulerRole'),
    );
    expect(passed).toBe(JSON.stringify({ 'Fn::GetAtt': [fireSchedulerRole, 'Arn'] }));
    expect(api.Properties.Environment).toMatchObject({
      Variables: {
        LIFEBOAT_SCHEDULE_GROUP: expect.anything(),
        LIFEBOAT_SCHEDULE_TARGET_ARN: { 'Fn::GetAtt': [fireId, 'Arn'] },
        LIFEBOAT_SCHEDULER_ROLE_ARN: { 'Fn::GetAtt': [fireSchedulerRole, 'Arn'] },
        LIFEBOAT_SCHEDULE_DEAD_LETTER_ARN: expect.anything(),
      },
    });
  });
});
