/**
 * The rehearsal's CloudFormation: gives every resource of the template a physical id, as a deploy
 * would, and creates in moto what the functions reach there — the KMS keys, the buckets (versioned,
 * encrypted by default), the queues (visibility timeout and redrive policy from the template) and
 * the IAM roles with their policies, each assumed for a set of credentials. Lambda functions, state
 * machines and ECS tasks are not created in moto: the rehearsal runs them (lambda.ts,
 * state-machines.ts, tasks.ts). Names carry a run suffix, so deployments share one moto.
 */
import { randomBytes } from 'node:crypto';
import { CreateRoleCommand, IAMClient, PutRolePolicyCommand } from '@aws-sdk/client-iam';
import { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import {
  type BucketLocationConstraint,
  CreateBucketCommand,
  PutBucketEncryptionCommand,
  PutBucketVersioningCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { createScheduleGroups } from './schedule-groups.js';
import {
  type CloudAssembly,
  type Json,
  type Physical,
  type Resolver,
  resolve,
  resolveString,
  resourcesOf,
} from './template.js';

export interface AwsTarget {
  readonly endpoint: string;
  readonly region: string;
  readonly account: string;
  readonly credentials: {
    readonly accessKeyId: string;
    readonly secretAccessKey: string;
    /** Set for an account reached through a role (the DR account: moto picks the account by the key). */
    readonly sessionToken?: string;
  };
}

export interface RoleCredentials {
  readonly roleArn: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken: string;
}

/** Who holds an access key: the role it belongs to and the function, task or service using it. */
export interface KeyHolder {
  readonly roleArn: string;
  readonly caller: string;
}

export interface Deployment {
  readonly assembly: CloudAssembly;
  readonly resolver: Resolver;
  readonly target: AwsTarget;
  /** The role ARN of each role of the template, by logical id. */
  readonly roleArns: ReadonlyMap<string, string>;
  /** Credentials for a caller acting as a role of the template (a Lambda, a task), as its service gets them. */
  assume(options: { roleArn: string; caller: string }): Promise<RoleCredentials>;
  /** Who holds each access key handed out. */
  holderOf(accessKeyId: string): KeyHolder | undefined;
  /** The secret of an access key handed out (the EKS token webhook verifies signatures with it). */
  secretOf(accessKeyId: string): string | undefined;
}

type Json0 = { [key: string]: Json };

const short = (text: string, max: number): string => (text.length <= max ? text : text.slice(0, max));

/** Physical ids of the resource types the template holds that nothing needs created. */
function plainPhysical(options: {
  id: string;
  type: string;
  props: Json0;
  target: AwsTarget;
  stack: string;
  suffix: string;
}): Physical | undefined {
  const { id, type, props, target, stack, suffix } = options;
  const { account, region } = target;
  const name = (given: Json | undefined, max = 64) =>
    typeof given === 'string' ? given : short(`${stack}-${id}-${suffix}`, max);
  switch (type) {
    case 'AWS::IAM::Role': {
      const roleName = name(props.RoleName);
      return {
        ref: roleName,
        attributes: {
          Arn: `arn:aws:iam::${account}:role/${roleName}`,
          RoleId: `AROA${suffix.toUpperCase()}`,
        },
      };
    }
    case 'AWS::Lambda::Function': {
      const fn = name(props.FunctionName);
      return { ref: fn, attributes: { Arn: `arn:aws:lambda:${region}:${account}:function:${fn}` } };
    }
    case 'AWS::Logs::LogGroup': {
      const group = name(props.LogGroupName, 512);
      return { ref: group, attributes: { Arn: `arn:aws:logs:${region}:${account}:log-group:${group}:*` } };
    }
    case 'AWS::StepFunctions::StateMachine': {
      const machine = name(props.StateMachineName, 80);
      const arn = `arn:aws:states:${region}:${account}:stateMachine:${machine}`;
      return { ref: arn, attributes: { Arn: arn, Name: machine } };
    }
    case 'AWS::ECS::Cluster': {
      const cluster = name(props.ClusterName);
      return { ref: cluster, attributes: { Arn: `arn:aws:ecs:${region}:${account}:cluster/${cluster}` } };
    }
    case 'AWS::ECS::TaskDefinition': {
      const arn = `arn:aws:ecs:${region}:${account}:task-definition/${name(props.Family, 255)}:1`;
      return { ref: arn, attributes: { TaskDefinitionArn: arn } };
    }
    case 'AWS::EC2::VPC':
      return { ref: `vpc-${suffix}${id.length}`, attributes: { CidrBlock: '10.0.0.0/16' } };
    case 'AWS::EC2::Subnet':
      return {
        ref: `subnet-${id.toLowerCase().slice(0, 8)}${suffix}`,
        attributes: { SubnetId: `subnet-${id}` },
      };
    case 'AWS::EC2::SecurityGroup': {
      const group = `sg-${id.toLowerCase().slice(0, 8)}${suffix}`;
      return { ref: group, attributes: { GroupId: group } };
    }
    default:
      return { ref: `${id}-${suffix}`, attributes: {} };
  }
}

async function createKeys(options: {
  assembly: CloudAssembly;
  target: AwsTarget;
  physical: Map<string, Physical>;
}): Promise<void> {
  const kms = new KMSClient({ ...options.target });
  for (const [id] of resourcesOf(options.assembly.template, 'AWS::KMS::Key')) {
    const { KeyMetadata } = await kms.send(new CreateKeyCommand({ Description: `rehearsal ${id}` }));
    if (!KeyMetadata?.KeyId || !KeyMetadata.Arn) throw new Error(`rehearsal: moto made no key for ${id}`);
    options.physical.set(id, {
      ref: KeyMetadata.KeyId,
      attributes: { Arn: KeyMetadata.Arn, KeyId: KeyMetadata.KeyId },
    });
  }
}

async function createBuckets(options: {
  assembly: CloudAssembly;
  target: AwsTarget;
  resolver: Resolver;
  physical: Map<string, Physical>;
  suffix: string;
}): Promise<void> {
  const s3 = new S3Client({ ...options.target, forcePathStyle: true });
  const { region } = options.target;
  for (const [id, resource] of resourcesOf(options.assembly.template, 'AWS::S3::Bucket')) {
    const bucket = short(`${options.assembly.stackName}-${id}-${options.suffix}`.toLowerCase(), 63);
    options.physical.set(id, {
      ref: bucket,
      attributes: {
        Arn: `arn:aws:s3:::${bucket}`,
        DomainName: `${bucket}.s3.amazonaws.com`,
        RegionalDomainName: `${bucket}.s3.${region}.amazonaws.com`,
      },
    });
    await s3.send(
      new CreateBucketCommand({
        Bucket: bucket,
        // Outside us-east-1 S3 needs the bucket's region named (the DR stack's region 2).
        ...(region === 'us-east-1'
          ? {}
          : { CreateBucketConfiguration: { LocationConstraint: region as BucketLocationConstraint } }),
      }),
    );
    const props = (resource.Properties ?? {}) as Json0;
    if ((props.VersioningConfiguration as Json0 | undefined)?.Status === 'Enabled')
      await s3.send(
        new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }),
      );
    const encryption = resolve(options.resolver, props.BucketEncryption ?? null) as Json0 | null;
    const rules = (encryption?.ServerSideEncryptionConfiguration ?? []) as Json0[];
    const byDefault = rules[0]?.ServerSideEncryptionByDefault as Json0 | undefined;
    if (byDefault?.SSEAlgorithm === 'aws:kms')
      await s3.send(
        new PutBucketEncryptionCommand({
          Bucket: bucket,
          ServerSideEncryptionConfiguration: {
            Rules: [
              {
                ApplyServerSideEncryptionByDefault: {
                  SSEAlgorithm: 'aws:kms',
                  KMSMasterKeyID: String(byDefault.KMSMasterKeyID),
                },
              },
            ],
          },
        }),
      );
  }
}

/** Queues in dependency order: a dead-letter queue before the queue that redrives to it. */
async function createQueues(options: {
  assembly: CloudAssembly;
  target: AwsTarget;
  resolver: Resolver;
  physical: Map<string, Physical>;
  suffix: string;
}): Promise<void> {
  const sqs = new SQSClient({ ...options.target });
  const pending = resourcesOf(options.assembly.template, 'AWS::SQS::Queue');
  while (pending.length > 0) {
    const index = pending.findIndex(([, r]) => {
      try {
        resolve(options.resolver, (r.Properties?.RedrivePolicy ?? null) as Json);
        return true;
      } catch {
        return false;
      }
    });
    if (index < 0) throw new Error('rehearsal: queues whose redrive policies name each other');
    const [found] = pending.splice(index, 1);
    if (!found) break;
    const [id, resource] = found;
    const props = (resource.Properties ?? {}) as Json0;
    const name = short(`${options.assembly.stackName}-${id}-${options.suffix}`, 80);
    const attributes: Record<string, string> = {};
    if (props.VisibilityTimeout !== undefined) attributes.VisibilityTimeout = String(props.VisibilityTimeout);
    if (props.MessageRetentionPeriod !== undefined)
      attributes.MessageRetentionPeriod = String(props.MessageRetentionPeriod);
    if (props.RedrivePolicy !== undefined)
      attributes.RedrivePolicy = JSON.stringify(resolve(options.resolver, props.RedrivePolicy));
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    if (!QueueUrl) throw new Error(`rehearsal: moto made no queue for ${id}`);
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
    );
    options.physical.set(id, {
      ref: QueueUrl,
      attributes: { Arn: Attributes?.QueueArn ?? '', QueueName: name, QueueUrl },
    });
  }
}

/** The template's roles in moto, each with its inline policies. */
async function createRoles(options: {
  assembly: CloudAssembly;
  target: AwsTarget;
  resolver: Resolver;
}): Promise<Map<string, string>> {
  const { assembly, target, resolver } = options;
  const iam = new IAMClient({ ...target });
  const roleArns = new Map<string, string>();
  for (const [id, resource] of resourcesOf(assembly.template, 'AWS::IAM::Role')) {
    const physical = resolver.physical.get(id);
    if (!physical) continue;
    const props = (resource.Properties ?? {}) as Json0;
    await iam.send(
      new CreateRoleCommand({
        RoleName: physical.ref,
        AssumeRolePolicyDocument: JSON.stringify(resolve(resolver, props.AssumeRolePolicyDocument ?? {})),
      }),
    );
    roleArns.set(id, physical.attributes.Arn ?? '');
  }
  for (const [id, resource] of resourcesOf(assembly.template, 'AWS::IAM::Policy')) {
    const props = (resource.Properties ?? {}) as Json0;
    for (const role of (props.Roles ?? []) as Json[]) {
      await iam.send(
        new PutRolePolicyCommand({
          RoleName: resolveString(resolver, role),
          PolicyName: resolveString(resolver, props.PolicyName ?? id),
          PolicyDocument: JSON.stringify(resolve(resolver, props.PolicyDocument ?? {})),
        }),
      );
    }
  }
  return roleArns;
}

/** Hands out credentials per caller (one AssumeRole each, so every call names its caller). */
function credentialIssuer(target: AwsTarget) {
  const sts = new STSClient({ ...target });
  const holders = new Map<string, KeyHolder & { secret: string }>();
  const issued = new Map<string, Promise<RoleCredentials>>();
  const assume = async (roleArn: string, caller: string): Promise<RoleCredentials> => {
    const { Credentials } = await sts.send(
      new AssumeRoleCommand({
        RoleArn: roleArn,
        RoleSessionName: caller.replace(/[^\w+=,.@-]/g, '-').slice(0, 64),
      }),
    );
    if (!Credentials?.AccessKeyId || !Credentials.SecretAccessKey || !Credentials.SessionToken)
      throw new Error(`rehearsal: moto gave no credentials for ${roleArn}`);
    holders.set(Credentials.AccessKeyId, { roleArn, caller, secret: Credentials.SecretAccessKey });
    return {
      roleArn,
      accessKeyId: Credentials.AccessKeyId,
      secretAccessKey: Credentials.SecretAccessKey,
      sessionToken: Credentials.SessionToken,
    };
  };
  return {
    assume: ({ roleArn, caller }: { roleArn: string; caller: string }) => {
      const key = `${roleArn} ${caller}`;
      let credentials = issued.get(key);
      if (!credentials) {
        credentials = assume(roleArn, caller);
        issued.set(key, credentials);
      }
      return credentials;
    },
    holderOf: (accessKeyId: string): KeyHolder | undefined => {
      const holder = holders.get(accessKeyId);
      return holder ? { roleArn: holder.roleArn, caller: holder.caller } : undefined;
    },
    secretOf: (accessKeyId: string) => holders.get(accessKeyId)?.secret,
  };
}

/** Deploys the assembly's stack into moto, as far as the rehearsal needs it deployed. */
export async function deploy(options: { assembly: CloudAssembly; target: AwsTarget }): Promise<Deployment> {
  const { assembly, target } = options;
  const suffix = randomBytes(3).toString('hex');
  const physical = new Map<string, Physical>();
  const resolver: Resolver = {
    account: target.account,
    region: target.region,
    stackName: assembly.stackName,
    physical,
  };
  const created = new Set(['AWS::KMS::Key', 'AWS::S3::Bucket', 'AWS::SQS::Queue']);
  for (const [id, resource] of Object.entries(assembly.template.Resources)) {
    if (created.has(resource.Type)) continue;
    const plain = plainPhysical({
      id,
      type: resource.Type,
      props: (resource.Properties ?? {}) as Json0,
      target,
      stack: assembly.stackName,
      suffix,
    });
    if (plain) physical.set(id, plain);
  }
  await createKeys({ assembly, target, physical });
  await createBuckets({ assembly, target, resolver, physical, suffix });
  await createQueues({ assembly, target, resolver, physical, suffix });
  await createScheduleGroups({ assembly, target, physical });
  const roleArns = await createRoles({ assembly, target, resolver });
  return { assembly, resolver, target, roleArns, ...credentialIssuer(target) };
}
