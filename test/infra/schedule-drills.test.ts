/**
 * A Schedule's drill target in the synthesized stack: FireSchedule is told the drill workflow and
 * may start it and look at its executions, and nothing more of it (it starts no restore).
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { LifeboatStack } from '../../infra/lifeboat-stack.js';
import { iamMatch } from '../rehearsal/iam.js';

interface Statement {
  readonly Effect: string;
  readonly Action: string | string[];
  readonly Resource: unknown;
}

type Resources = Record<string, { Properties: Record<string, unknown> }>;

const list = <T>(x: T | T[]): T[] => (Array.isArray(x) ? x : [x]);

describe("FireSchedule and a Schedule's drill target", () => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const template = Template.fromStack(
    new LifeboatStack(app, 'Lifeboat', {
      env: { account: '123456789012', region: 'us-east-1' },
      clusters: ['prod-a', 'dr'],
    }),
  );
  const functions = template.findResources('AWS::Lambda::Function') as Resources;
  const fire = Object.values(functions).find(
    (f) => JSON.stringify(f.Properties.FunctionName) === '"Lifeboat-FireSchedule"',
  );
  const role = (fire?.Properties.Role as { 'Fn::GetAtt': [string] } | undefined)?.['Fn::GetAtt'][0];
  const statements = Object.values(template.findResources('AWS::IAM::Policy') as Resources)
    .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === role))
    .flatMap((p) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  const resourcesFor = (action: string) =>
    statements
      .filter(
        (s) => s.Effect === 'Allow' && list(s.Action).some((a) => iamMatch(a, action, { caseless: true })),
      )
      .flatMap((s) => list(s.Resource));
  const [drillId] = Object.entries(
    template.findResources('AWS::StepFunctions::StateMachine') as Resources,
  ).find(([, m]) => JSON.stringify(m.Properties.StateMachineName) === '"Lifeboat-drill"') ?? [''];

  it('names the drill workflow to FireSchedule', () => {
    expect(drillId).not.toBe('');
    expect(fire?.Properties.Environment).toMatchObject({
      Variables: { LIFEBOAT_DRILL_STATE_MACHINE_ARN: { Ref: drillId } },
    });
  });

  it('lets FireSchedule start the drill workflow and describe its executions, and start no restore', () => {
    const starts = resourcesFor('states:StartExecution');
    expect(starts).toContainEqual({ Ref: drillId });
    expect(JSON.stringify(starts)).not.toMatch(/Restore/);
    expect(JSON.stringify(resourcesFor('states:DescribeExecution'))).toContain('Lifeboat-drill:*');
  });
});
