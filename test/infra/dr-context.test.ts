/** The CDK app's DR context keys: parsed into the stack's props, or refused naming the key. */
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { drContext } from '../../infra/bin/dr-context.js';

const node = (context: Record<string, string>) => new App({ context }).node;

describe('the DR context of the CDK app', () => {
  it('gives no DR props when no key is set', () => {
    expect(drContext(node({}))).toEqual({});
  });

  it('reads DR targets as ACCOUNT:REGION[:KEY] lists and as JSON', () => {
    const key = 'arn:aws:kms:us-west-2:210987654321:key/k1';
    expect(
      drContext(node({ 'lifeboat:drTargets': `210987654321:us-west-2:${key}, 444455556666:eu-west-1` })),
    ).toEqual({
      drTargets: [
        { account: '210987654321', region: 'us-west-2', kmsKeyArn: key },
        { account: '444455556666', region: 'eu-west-1' },
      ],
    });
    expect(
      drContext(node({ 'lifeboat:drTargets': '[{"account":"210987654321","region":"us-west-2"}]' }))
        .drTargets,
    ).toEqual([{ account: '210987654321', region: 'us-west-2' }]);
  });

  it('reads the replica, the DR source and the cross-account restore roles', () => {
    const props = drContext(
      node({
        'lifeboat:replicateTo':
          '{"bucketArn":"arn:aws:s3:::replica","kmsKeyArn":"arn:aws:kms:us-west-2:210987654321:key/r","account":"210987654321"}',
        'lifeboat:drSource': 'arn:aws:s3:::lifeboat-source',
        'lifeboat:drSourceKey': 'arn:aws:kms:us-east-1:123456789012:key/s',
        'lifeboat:drSourceRegion': 'us-east-1',
        'lifeboat:crossAccountRestoreRoles': 'arn:aws:iam::210987654321:role/lifeboat-volumes',
      }),
    );
    expect(props).toEqual({
      replicateTo: {
        bucketArn: 'arn:aws:s3:::replica',
        kmsKeyArn: 'arn:aws:kms:us-west-2:210987654321:key/r',
        account: '210987654321',
      },
      drSource: {
        bucketArn: 'arn:aws:s3:::lifeboat-source',
        kmsKeyArn: 'arn:aws:kms:us-east-1:123456789012:key/s',
        region: 'us-east-1',
      },
      crossAccountRestoreRoles: ['arn:aws:iam::210987654321:role/lifeboat-volumes'],
    });
  });

  it.each([
    [{ 'lifeboat:drTargets': '210987654321' }, /lifeboat:drTargets: "210987654321" is not ACCOUNT:REGION/],
    [{ 'lifeboat:drTargets': '[{"account":"1"}]' }, /lifeboat:drTargets\[0\] needs "account" and "region"/],
    [{ 'lifeboat:replicateTo': '{"bucketArn":"arn:aws:s3:::r"}' }, /lifeboat:replicateTo needs "kmsKeyArn"/],
    [{ 'lifeboat:replicateTo': '{' }, /lifeboat:replicateTo is not valid JSON/],
    [{ 'lifeboat:drSource': 'lifeboat-source' }, /lifeboat:drSource must be an S3 bucket ARN/],
    [
      { 'lifeboat:crossAccountRestoreRoles': 'role/x' },
      /lifeboat:crossAccountRestoreRoles must be role ARNs/,
    ],
  ])('refuses %j naming the key', (context, message) => {
    expect(() => drContext(node(context))).toThrow(message);
  });
});
