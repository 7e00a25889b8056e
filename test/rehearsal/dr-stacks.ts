/**
 * The two stacks of the cross-account DR rehearsal, as a team would synthesize them: the source
 * stack (account A, region 1) naming the DR account and region, and its copy role, in
 * `lifeboat:drTargets`, and the DR stack (account B, region 2) naming the source's bucket and key
 * in `lifeboat:drSource…`. The DR stack is synthesized once the source is deployed, with the
 * deployed bucket's name and key ARN as its `-c` values (`drAssembly`), as its team would run
 * `cdk synth`: those names are the run's own, so it is not cached but made in a directory of its
 * own and removed after the run.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { DR_ACCOUNT } from '../env/moto.js';
import { REHEARSAL_CLUSTERS, ROOT, runSynth, type SynthContext, synthesizedAssembly } from './assembly.js';
import type { AwsTarget, Deployment } from './deploy.js';
import { type CloudAssembly, type Json, loadAssembly, resolve, resourcesOf } from './template.js';

export const SOURCE_REGION = 'us-east-1';
export const DR_REGION = 'us-west-2';
/** The cluster the DR stack serves (a second cluster, of the DR rehearsal). */
export const DR_CLUSTERS = ['dr'];

/**
 * The DR account's role snapshot copies are made through (its operators make it: no template
 * does), named in the source's drTargets so VolumeOperations may assume it, and the external id
 * its trust policy asks for.
 */
export const COPY_ROLE_ARN = `arn:aws:iam::${DR_ACCOUNT}:role/lifeboat-rehearsal-snapshot-copy`;
export const COPY_EXTERNAL_ID = 'lifeboat-rehearsal-dr-copies';

export const SOURCE_CONTEXT: SynthContext = {
  'lifeboat:drTargets': `${DR_ACCOUNT}:${DR_REGION}:${COPY_ROLE_ARN}`,
};
/** The DR stack's context: the deployed source's bucket and its key, in region 1. */
export function drContext(source: { readonly bucket: string; readonly keyArn: string }): SynthContext {
  return {
    'lifeboat:drSource': `arn:aws:s3:::${source.bucket}`,
    'lifeboat:drSourceKey': source.keyArn,
    'lifeboat:drSourceRegion': SOURCE_REGION,
  };
}

/** The source stack as deployed without DR targets (the single-stack rehearsal's assembly). */
export async function plainSourceAssembly(): Promise<CloudAssembly> {
  return loadAssembly(await synthesizedAssembly(REHEARSAL_CLUSTERS));
}

/**
 * The DR stack synthesized in region 2 by the README's command, naming the deployed source's
 * bucket and key; `dispose` removes its directory (once the rehearsal running it has stopped).
 */
export function drAssembly(source: {
  readonly bucket: string;
  readonly keyArn: string;
}): Promise<{ assembly: CloudAssembly; dispose: () => Promise<void> }> {
  return runAssembly({
    what: 'the DR stack',
    clusters: DR_CLUSTERS,
    context: drContext(source),
    region: DR_REGION,
  });
}

/**
 * The source stack with DR targets and the customer key its volumes are encrypted with named in
 * `-c lifeboat:snapshotKeys` (the only key VolumeOperations may grant B the use of): the key is
 * the run's own, so the assembly is made for the run, like the DR stack's.
 */
export function sourceAssemblyNaming(
  snapshotKey: string,
): Promise<{ assembly: CloudAssembly; dispose: () => Promise<void> }> {
  const context = { ...SOURCE_CONTEXT, 'lifeboat:snapshotKeys': snapshotKey };
  return runAssembly({ what: 'the source stack', clusters: REHEARSAL_CLUSTERS, context });
}

async function runAssembly(options: {
  what: string;
  clusters: readonly string[];
  context: SynthContext;
  region?: string;
}): Promise<{ assembly: CloudAssembly; dispose: () => Promise<void> }> {
  // Under the project, as the cached assemblies are: the bundles import the SDK Lambda provides
  // from node_modules, which Node finds from there.
  const cache = join(ROOT, 'node_modules', '.cache', 'lifeboat');
  await mkdir(cache, { recursive: true });
  const outdir = await mkdtemp(join(cache, 'cdk-out-dr-run-'));
  const dispose = () => rm(outdir, { recursive: true, force: true });
  const { what, ...synth } = options;
  const result = await runSynth({ ...synth, outdir });
  if (result.code !== 0) {
    await dispose();
    throw new Error(`cdk synth of ${what} failed (exit ${result.code}):\n${result.output.slice(-4000)}`);
  }
  return { assembly: await loadAssembly(outdir), dispose };
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
