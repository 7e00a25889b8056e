/**
 * What the stack costs while no backup runs, read from the template (README, "Deploying"): only
 * its KMS keys ($1 each) and CloudWatch alarms ($0.10 each) bill by the month, and the SQS event
 * source mappings poll their queues.
 * Nothing that runs or bills by the hour while idle: no NAT gateway, no interface VPC endpoint,
 * no ECS service, no provisioned concurrency, no EC2 instance.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { LifeboatStack } from '../../infra/lifeboat-stack.js';

const template = Template.fromStack(
  new LifeboatStack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Lifeboat', {
    env: { account: '123456789012', region: 'us-east-1' },
    clusters: ['prod-a'],
  }),
);
const count = (type: string) => Object.keys(template.findResources(type)).length;

describe('the stack while idle', () => {
  it('bills by the month only for its two KMS keys and five alarms', () => {
    expect(count('AWS::KMS::Key')).toBe(2);
    expect(count('AWS::CloudWatch::Alarm')).toBe(5);
  });

  it('has nothing that runs or bills by the hour', () => {
    for (const type of [
      'AWS::EC2::NatGateway',
      'AWS::EC2::Instance',
      'AWS::ECS::Service',
      'AWS::Lambda::Version',
      'AWS::ElasticLoadBalancingV2::LoadBalancer',
    ])
      expect({ type, count: count(type) }).toEqual({ type, count: 0 });
    const interfaceEndpoints = Object.values(template.findResources('AWS::EC2::VPCEndpoint')).filter(
      (e) => e.Properties.VpcEndpointType === 'Interface',
    );
    expect(interfaceEndpoints).toEqual([]);
    for (const f of Object.values(template.findResources('AWS::Lambda::Function')))
      expect(f.Properties.ProvisionedConcurrencyConfig).toBeUndefined();
  });

  it('polls two queues with Lambda event source mappings', () => {
    expect(count('AWS::Lambda::EventSourceMapping')).toBe(2);
  });
});
