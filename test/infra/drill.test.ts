/**
 * The DR drill workflow in the synthesized template: its five steps, each with its role and the
 * storage areas it writes; the checks' view of the cluster; the state machine allowed to run the
 * restore workflow nested (start it, follow and stop its executions, the `.sync` rule) and nothing
 * more; the Api function starting and describing drills; PublishOutcome told of a drill's end.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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

const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
const stack = new LifeboatStack(app, 'Lifeboat', {
  env: { account: '123456789012', region: 'us-east-1' },
  clusters: ['prod-a'],
});
const template = Template.fromStack(stack);
const logicalId = (c: { node: { defaultChild?: unknown } }): string =>
  stack.getLogicalId(c.node.defaultChild as never);
const drillMachine = logicalId(stack.drill.stateMachine);
const restoreMachine = logicalId(stack.restore.stateMachine);

function statementsOf(roleId: string): Statement[] {
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((p) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleId))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
}

const roleOf = (prefix: string): string => {
  const id = Object.keys(template.findResources('AWS::IAM::Role')).find((r) =>
    new RegExp(`^${prefix}[0-9A-F]{8}$`).test(r),
  );
  if (!id) throw new Error(`no role ${prefix}`);
  return id;
};

const actions = (s: Statement): string[] => (Array.isArray(s.Action) ? s.Action : [s.Action]);
const granting = (statements: Statement[], action: string): Statement[] =>
  statements.filter(
    (s) => s.Effect === 'Allow' && actions(s).some((a) => iamMatch(a, action, { caseless: true })),
  );
const text = (v: unknown): string => JSON.stringify(v);

/** The object paths below the bucket that the role may put. */
function written(roleId: string): string[] {
  return granting(statementsOf(roleId), 's3:PutObject')
    .flatMap((s) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]))
    .map((r) => String((r as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1][1]).replace(/^\//, ''))
    .sort();
}

describe('the DR drill workflow', () => {
  it('gives each step a role writing only its own areas, and none deleting', () => {
    expect(written(roleOf('DrillStartDrillRole'))).toEqual([
      'plugins/lifeboat/claims/drills/*',
      'plugins/lifeboat/drills/*',
    ]);
    expect(written(roleOf('DrillCheckDrillItemsRole'))).toEqual(['plugins/lifeboat/work/drills/*']);
    expect(written(roleOf('DrillCheckDrillReadinessRole'))).toEqual(['plugins/lifeboat/work/drills/*']);
    expect(written(roleOf('DrillFinishDrillRole'))).toEqual(['plugins/lifeboat/drills/*']);
    for (const step of ['StartDrill', 'CheckDrillItems', 'CheckDrillReadiness', 'FinishDrill']) {
      const statements = statementsOf(roleOf(`Drill${step}Role`));
      expect(granting(statements, 's3:DeleteObject'), step).toEqual([]);
      expect(granting(statements, 'states:StartExecution'), step).toEqual([]);
    }
  });

  it('lets only the checks view the clusters, as the restore’s planning does', () => {
    const entries = Object.values(template.findResources('AWS::EKS::AccessEntry'));
    const viewers = (step: string) =>
      entries.filter((e) => text(e.Properties.PrincipalArn).includes(roleOf(`Drill${step}Role`)));
    for (const step of ['CheckDrillItems', 'CheckDrillReadiness']) {
      const [entry, ...more] = viewers(step);
      expect(more).toEqual([]);
      expect(entry?.Properties.ClusterName).toBe('prod-a');
      expect(text(entry?.Properties.AccessPolicies)).toContain('AmazonEKSAdminViewPolicy');
      expect(text(granting(statementsOf(roleOf(`Drill${step}Role`)), 'eks:DescribeCluster'))).toContain(
        'cluster/prod-a',
      );
    }
    for (const step of ['StartDrill', 'FinishDrill']) {
      expect(viewers(step)).toEqual([]);
      expect(granting(statementsOf(roleOf(`Drill${step}Role`)), 'eks:DescribeCluster')).toEqual([]);
    }
  });

  it('lets ClearDrillNamespaces view the clusters and delete namespaces only, writing nothing stored', () => {
    const entries = Object.values(template.findResources('AWS::EKS::AccessEntry')).filter((e) =>
      text(e.Properties.PrincipalArn).includes(roleOf('DrillClearDrillNamespacesRole')),
    );
    expect(entries.map((e) => [e.Properties.ClusterName, e.Properties.KubernetesGroups])).toEqual([
      ['prod-a', ['lifeboat:drill-namespaces']],
    ]);
    expect(text(entries[0]?.Properties.AccessPolicies)).toContain('AmazonEKSAdminViewPolicy');
    const statements = statementsOf(roleOf('DrillClearDrillNamespacesRole'));
    for (const action of ['s3:PutObject', 's3:DeleteObject', 'states:StartExecution'])
      expect(granting(statements, action), action).toEqual([]);
    const rbac = readFileSync(join('infra', 'kubernetes', 'rbac.yaml'), 'utf8');
    const role = rbac.split('\n---\n').find((d) => d.includes('name: lifeboat-drill-namespaces\nrules:'));
    expect(role).toContain('resources: ["namespaces"]\n    verbs: ["delete"]');
  });

  it('lets the drill machine run only the restore workflow nested, with the .sync rule', () => {
    const machine = template.findResources('AWS::StepFunctions::StateMachine')[drillMachine];
    const roleId = (machine?.Properties.RoleArn as { 'Fn::GetAtt': [string] } | undefined)?.['Fn::GetAtt'][0];
    const statements = statementsOf(roleId ?? '?');
    const start = granting(statements, 'states:StartExecution');
    expect(start.map((s) => s.Resource)).toEqual([{ Ref: restoreMachine }]);
    for (const action of ['states:DescribeExecution', 'states:StopExecution']) {
      const [only, ...more] = granting(statements, action);
      expect(more).toEqual([]);
      expect(text(only?.Resource)).toContain(':execution:Lifeboat-restore:*');
    }
    for (const action of ['events:PutTargets', 'events:PutRule', 'events:DescribeRule'])
      expect(granting(statements, action).map((s) => text(s.Resource))).toEqual([
        expect.stringContaining('rule/StepFunctionsGetEventsForStepFunctionsExecutionRule'),
      ]);
    const invoked = granting(statements, 'lambda:InvokeFunction').flatMap((s) => s.Resource as unknown[]);
    expect(text(invoked)).not.toMatch(/Restore|Backup|Api/);
    expect(text(machine?.Properties.DefinitionSubstitutions.RestoreStateMachineArn)).toBe(
      text({ Ref: restoreMachine }),
    );
  });

  it('gives the Api function the drill machine’s ARN, and lets it start and describe drills only', () => {
    const api = template.findResources('AWS::Lambda::Function')[logicalId(stack.api.node.findChild('Api'))];
    expect(api?.Properties.Environment.Variables.LIFEBOAT_DRILL_STATE_MACHINE_ARN).toEqual({
      Ref: drillMachine,
    });
    const statements = statementsOf(roleOf('ApiApiRole'));
    expect(granting(statements, 'states:StartExecution').map((s) => s.Resource)).toContainEqual({
      Ref: drillMachine,
    });
    expect(text(granting(statements, 'states:DescribeExecution'))).toContain(':execution:Lifeboat-drill:*');
    expect(granting(statements, 'states:StopExecution')).toEqual([]);
  });

  it('sends a drill’s end to PublishOutcome without an alarm of its own', () => {
    const rule = Object.values(template.findResources('AWS::Events::Rule')).find((r) =>
      text(r.Properties.EventPattern).includes('aws.states'),
    );
    expect(rule?.Properties.EventPattern.detail.stateMachineArn).toContainEqual({ Ref: drillMachine });
    const alarmed = Object.values(template.findResources('AWS::CloudWatch::Alarm')).filter((a) =>
      text(a.Properties.Dimensions).includes(drillMachine),
    );
    expect(alarmed).toEqual([]);
  });
});
