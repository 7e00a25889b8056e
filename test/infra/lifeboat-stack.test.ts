import { App, type Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { LifeboatStack } from '../../infra/lifeboat-stack.js';

function synth(): { stack: Stack; template: Template } {
  const app = new App();
  const stack = new LifeboatStack(app, 'Lifeboat', { env: { account: '123456789012', region: 'us-east-1' } });
  const template = Template.fromStack(stack);
  return { stack, template };
}

describe('the Lifeboat stack', () => {
  let stack: Stack;
  let template: Template;
  beforeAll(() => {
    ({ stack, template } = synth());
  });

  it('encrypts the backup bucket with its own rotating KMS key', () => {
    template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          Match.objectLike({
            ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: Match.anyValue() },
          }),
        ],
      },
      VersioningConfiguration: { Status: 'Enabled' },
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
    });
  });

  it('refuses requests without TLS on every bucket', () => {
    const policies = template.findResources('AWS::S3::BucketPolicy');
    const buckets = template.findResources('AWS::S3::Bucket');
    expect(Object.keys(policies)).toHaveLength(Object.keys(buckets).length);
    for (const policy of Object.values(policies)) {
      expect(policy.Properties.PolicyDocument.Statement).toContainEqual(
        expect.objectContaining({
          Effect: 'Deny',
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      );
    }
  });

  it('expires working data of executions, outside the Velero layout', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([Match.objectLike({ Prefix: 'plugins/lifeboat/work/', Status: 'Enabled' })]),
      },
    });
  });

  it('passes the cdk-nag AwsSolutions checks', () => {
    const report = new AwsSolutionsChecks(stack, { verbose: true }).validateScope(stack);
    expect(report.violations.map((v) => `${v.ruleName}: ${v.description}`)).toEqual([]);
    expect(report.success).toBe(true);
  });
});
