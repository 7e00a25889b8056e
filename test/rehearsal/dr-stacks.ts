/**
 * The two stacks of the cross-account DR rehearsal, as a team would synthesize them: the source
 * stack (account A, region 1) naming the DR account and region in `lifeboat:drTargets`, and the DR
 * stack (account B, region 2) naming the source's bucket and key in `lifeboat:drSource…`. The DR
 * stack is synthesized once (cached like the single stack) with the source location named by
 * placeholders; `nameSourceLocation` puts the deployed source's bucket and key ARN in their place,
 * as a team fills in the `-c` values once the source is deployed. Nothing else is changed.
 */
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { DR_ACCOUNT, SOURCE_ACCOUNT } from '../env/moto.js';
import { REHEARSAL_CLUSTERS, type SynthContext, synthesizedAssembly } from './assembly.js';
import type { AwsTarget, Deployment } from './deploy.js';
import {
  type CloudAssembly,
  type Json,
  loadAssembly,
  resolve,
  resourcesOf,
  type Template,
} from './template.js';

export const SOURCE_REGION = 'us-east-1';
export const DR_REGION = 'us-west-2';
/** The cluster the DR stack serves (a second cluster, of the DR rehearsal). */
export const DR_CLUSTERS = ['dr'];

const PLACEHOLDER_BUCKET = 'lifeboat-rehearsal-dr-source-placeholder';
const PLACEHOLDER_KEY = `arn:aws:kms:${SOURCE_REGION}:${SOURCE_ACCOUNT}:key/rehearsal-dr-source-key-placeholder`;

export const SOURCE_CONTEXT: SynthContext = { 'lifeboat:drTargets': `${DR_ACCOUNT}:${DR_REGION}` };
export const DR_CONTEXT: SynthContext = {
  'lifeboat:drSource': `arn:aws:s3:::${PLACEHOLDER_BUCKET}`,
  'lifeboat:drSourceKey': PLACEHOLDER_KEY,
  'lifeboat:drSourceRegion': SOURCE_REGION,
};

/** The source stack with DR targets: the README's synth with `-c lifeboat:drTargets=B:region-2`. */
export async function sourceAssembly(): Promise<CloudAssembly> {
  return loadAssembly(await synthesizedAssembly(REHEARSAL_CLUSTERS, SOURCE_CONTEXT));
}

/** The source stack as deployed without DR targets (the single-stack rehearsal's assembly). */
export async function plainSourceAssembly(): Promise<CloudAssembly> {
  return loadAssembly(await synthesizedAssembly(REHEARSAL_CLUSTERS));
}

/** The DR stack, synthesized in region 2, its source location still named by the placeholders. */
export async function drAssembly(): Promise<CloudAssembly> {
  return loadAssembly(await synthesizedAssembly(DR_CLUSTERS, DR_CONTEXT, DR_REGION));
}

/** Names the deployed source's bucket and key where the DR stack's synth had the placeholders. */
export function nameSourceLocation(
  assembly: CloudAssembly,
  source: { readonly bucket: string; readonly keyArn: string },
): CloudAssembly {
  const text = JSON.stringify(assembly.template);
  if (!text.includes(PLACEHOLDER_BUCKET) || !text.includes(PLACEHOLDER_KEY))
    throw new Error('rehearsal: the DR stack does not name the placeholder source location');
  const named = text.split(PLACEHOLDER_BUCKET).join(source.bucket).split(PLACEHOLDER_KEY).join(source.keyArn);
  return { ...assembly, template: JSON.parse(named) as Template };
}

/** The DR account, as its deployer reaches it: moto keeps the account of the role's credentials. */
export async function drTarget(
  endpoint: string,
): Promise<Pick<AwsTarget, 'account' | 'region' | 'credentials'>> {
  const sts = new STSClient({
    endpoint,
    region: DR_REGION,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  });
  const { Credentials } = await sts.send(
    new AssumeRoleCommand({
      RoleArn: `arn:aws:iam::${DR_ACCOUNT}:role/rehearsal-deployer`,
      RoleSessionName: 'rehearsal-dr-deploy',
    }),
  );
  if (!Credentials?.AccessKeyId || !Credentials.SecretAccessKey || !Credentials.SessionToken)
    throw new Error('rehearsal: moto gave no credentials for the DR account');
  return {
    account: DR_ACCOUNT,
    region: DR_REGION,
    credentials: {
      accessKeyId: Credentials.AccessKeyId,
      secretAccessKey: Credentials.SecretAccessKey,
      sessionToken: Credentials.SessionToken,
    },
  };
}

/** The ARN of the key a deployed bucket is encrypted with by default (the drSourceKey to name). */
export function bucketKeyArn(deployment: Deployment, bucket: string): string {
  const { resolver } = deployment;
  const found = resourcesOf(deployment.assembly.template, 'AWS::S3::Bucket').find(
    ([id]) => resolver.physical.get(id)?.ref === bucket,
  );
  const encryption = resolve(resolver, found?.[1].Properties?.BucketEncryption ?? null) as {
    ServerSideEncryptionConfiguration?: { ServerSideEncryptionByDefault?: { KMSMasterKeyID?: Json } }[];
  } | null;
  const key = String(
    encryption?.ServerSideEncryptionConfiguration?.[0]?.ServerSideEncryptionByDefault?.KMSMasterKeyID ?? '',
  );
  const arn = key.startsWith('arn:')
    ? key
    : [...resolver.physical.values()].find((p) => p.attributes.KeyId === key)?.attributes.Arn;
  if (!arn) throw new Error(`rehearsal: bucket ${bucket} has no KMS key of the template`);
  return arn;
}

/**
 * The source deployment as updated to another assembly of its stack (the same physical resources,
 * the other template's policies): what `cdk deploy` of the stack without drTargets leaves.
 */
export function updatedTo(deployment: Deployment, assembly: CloudAssembly): Deployment {
  return { ...deployment, assembly };
}
