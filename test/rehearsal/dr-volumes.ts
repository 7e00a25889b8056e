/**
 * The volume half of the two-account DR rehearsal: the DR account's snapshot-copy role, as its
 * operators would make it (docs/backup-volumes.md: a trust policy naming the source's
 * VolumeOperations role and an external id; copies only in the DR region, tagged by a backup,
 * re-encrypted with the DR key through EC2), created in moto and adopted by the source's IAM
 * evaluation, so VolumeOperations' AssumeRole of it and every call made with it are evaluated; and
 * the stored JSON the volume checks read.
 */
import { gunzipSync } from 'node:zlib';
import { CreateRoleCommand, IAMClient, PutRolePolicyCommand } from '@aws-sdk/client-iam';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { COPY_EXTERNAL_ID, COPY_ROLE_ARN, DR_REGION, drTarget, SOURCE_REGION } from './dr-stacks.js';
import type { Rehearsal } from './rehearsal.js';
import type { Json } from './template.js';

/** The copy role's policies for copies made for the source's VolumeOperations role. */
export function copyRolePolicies(options: { volumeOperationsRole: string; drKeyArn: string }): {
  trustPolicy: Json;
  policy: Json;
} {
  const snapshotsIn = (region: string) => `arn:aws:ec2:${region}::snapshot/*`;
  return {
    trustPolicy: {
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Principal: { AWS: options.volumeOperationsRole },
          Action: 'sts:AssumeRole',
          Condition: { StringEquals: { 'sts:ExternalId': COPY_EXTERNAL_ID } },
        },
      ],
    },
    policy: {
      Version: '2012-10-17',
      Statement: [
        // The source: a snapshot of the source region shared with this account.
        { Effect: 'Allow', Action: 'ec2:CopySnapshot', Resource: snapshotsIn(SOURCE_REGION) },
        {
          Effect: 'Allow',
          Action: 'ec2:CopySnapshot',
          Resource: snapshotsIn(DR_REGION),
          Condition: { Null: { 'aws:RequestTag/velero.io/backup': 'false' } },
        },
        {
          Effect: 'Allow',
          Action: 'ec2:CreateTags',
          Resource: snapshotsIn(DR_REGION),
          Condition: { StringEquals: { 'ec2:CreateAction': 'CopySnapshot' } },
        },
        { Effect: 'Allow', Action: 'ec2:DescribeSnapshots', Resource: '*' },
        {
          Effect: 'Allow',
          Action: [
            'kms:CreateGrant',
            'kms:Decrypt',
            'kms:DescribeKey',
            'kms:GenerateDataKeyWithoutPlaintext',
          ],
          Resource: options.drKeyArn,
          Condition: { StringEquals: { 'kms:ViaService': `ec2.${DR_REGION}.amazonaws.com` } },
        },
      ],
    },
  };
}

/** Makes the copy role in the DR account (moto) and has the source's IAM evaluation know it. */
export async function adoptCopyRole(options: {
  source: Rehearsal;
  endpoint: string;
  drKeyArn: string;
}): Promise<void> {
  const { source } = options;
  const volumeOperationsRole = source.lambda.functionNamed('Lifeboat-VolumeOperations').roleArn;
  const { trustPolicy, policy } = copyRolePolicies({ volumeOperationsRole, drKeyArn: options.drKeyArn });
  const target = await drTarget(options.endpoint);
  const iam = new IAMClient({
    endpoint: options.endpoint,
    region: DR_REGION,
    credentials: target.credentials,
  });
  const roleName = COPY_ROLE_ARN.split('/').pop() ?? '';
  await iam.send(
    new CreateRoleCommand({ RoleName: roleName, AssumeRolePolicyDocument: JSON.stringify(trustPolicy) }),
  );
  await iam.send(
    new PutRolePolicyCommand({
      RoleName: roleName,
      PolicyName: 'copies',
      PolicyDocument: JSON.stringify(policy),
    }),
  );
  source.iam.adoptRole({ roleArn: COPY_ROLE_ARN, name: 'copies', trustPolicy, policy });
}

/** A gzipped JSON document of a bucket, read as the test's own caller. */
export async function gzippedJson<T>(options: {
  endpoint: string;
  region: string;
  bucket: string;
  key: string;
}): Promise<T> {
  const s3 = new S3Client({
    endpoint: options.endpoint,
    region: options.region,
    forcePathStyle: true,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  });
  const stored = await s3.send(new GetObjectCommand({ Bucket: options.bucket, Key: options.key }));
  const bytes = await stored.Body?.transformToByteArray();
  return JSON.parse(gunzipSync(Buffer.from(bytes ?? [])).toString('utf8')) as T;
}
