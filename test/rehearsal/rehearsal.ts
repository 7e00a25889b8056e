/**
 * The deployment rehearsal: the stack a team would deploy, run from its synthesized cloud
 * assembly alone against the local cluster and moto. It deploys the template into moto
 * (deploy.ts), plays Lambda from the bundles CDK built (lambda.ts), the SQS event source mappings
 * (sqs-mappings.ts), Fargate from the image recipe (tasks.ts), Step Functions from the rendered
 * definitions (state-machines.ts), API Gateway's proxy integration (api-gateway.ts), EventBridge's
 * rules on executions' ends (event-rules.ts) and EKS from the access entries and the shipped RBAC (eks.ts),
 * with every AWS call through one gateway that evaluates it against its caller's role and meters
 * it (gateway.ts, iam.ts, meter.ts). Nothing here imports the use cases: only what the assembly
 * contains runs.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { ClusterInfo } from '../env/cluster.js';
import { startCluster, stopCluster } from '../env/cluster.js';
import type { Tools } from '../env/ensure-tools.js';
import type { AwsInfo } from '../env/moto.js';
import { type ApiAnswer, type ApiCall, apiGateway } from './api-gateway.js';
import { REHEARSAL_CLUSTERS, synthesizedAssembly } from './assembly.js';
import type { EncryptionKeys } from './aws-requests.js';
import { type AwsTarget, type Deployment, deploy } from './deploy.js';
import {
  accessEntriesOf,
  installAccessPolicies,
  installLifeboatRbac,
  RBAC_MANIFEST,
  TokenWebhook,
} from './eks.js';
import { EventRules } from './event-rules.js';
import { AwsGateway, type Fault } from './gateway.js';
import { IamPolicies } from './iam.js';
import { type InvocationResult, LambdaService } from './lambda.js';
import { Meter, type Usage } from './meter.js';
import { invokeAsScheduler, templateScheduleTargets } from './scheduler.js';
import { startEventSources } from './sqs-mappings.js';
import { type ExecutionOutcome, StepFunctions } from './state-machines.js';
import { EcsTasks } from './tasks.js';
import {
  type CloudAssembly,
  type Json,
  loadAssembly,
  resolve,
  resolveString,
  resourcesOf,
} from './template.js';

export interface RehearsalOptions {
  readonly tools: Tools;
  readonly aws: AwsInfo;
  /** Changes to the assembly before it is deployed (the tests that break the stack on purpose). */
  readonly alter?: (assembly: CloudAssembly) => void;
  /** The RBAC manifest to install (default: the one Lifeboat ships). */
  readonly rbacManifest?: string;
  /** The assembly to deploy (default: the single stack's, synthesized for REHEARSAL_CLUSTERS). */
  readonly assembly?: CloudAssembly;
  /** The account, region and credentials to deploy into (default: the source account, moto's region). */
  readonly target?: Pick<AwsTarget, 'account' | 'region' | 'credentials'>;
  /** The name of the EKS cluster the stack serves, started for it (default: 'rehearsal'). */
  readonly clusterName?: string;
  /** Other deployments whose bucket and key policies guard calls on their resources (a DR source). */
  readonly trusts?: readonly Deployment[];
}

export interface RehearsalReport {
  /** Calls a role did not allow, requests the rehearsal could not evaluate, tokens EKS refused. */
  readonly violations: readonly string[];
  /** Errors of the event source pollers (a mapping that cannot receive, …). */
  readonly pollerErrors: readonly string[];
  readonly unusedPermissions: ReadonlyMap<string, string[]>;
  readonly usage: Usage;
}

export interface Rehearsal {
  readonly deployment: Deployment;
  readonly cluster: ClusterInfo;
  readonly kubeConfig: KubeConfig;
  /** The backup bucket's name. */
  readonly bucket: string;
  readonly lambda: LambdaService;
  readonly stepFunctions: StepFunctions;
  /** The IAM evaluation of every call, with its decisions (`trust` applies another stack's policies). */
  readonly iam: IamPolicies;
  /** The endpoint the deployment's functions call AWS through (evaluated, metered, then moto). */
  readonly gateway: string;
  /** A request to the stack's HTTP API, as API Gateway hands it to the Api function (api-gateway.ts). */
  api(call: ApiCall): Promise<ApiAnswer>;
  /** Waits for the executions the API started. */
  settled(): Promise<void>;
  /** StartExecution of the stack's state machine whose name ends with `-<workflow>`. */
  start(workflow: 'backup' | 'restore', input: Json): Promise<ExecutionOutcome>;
  /**
   * Invokes a Scheduler target as Scheduler would at a time: one of the template's schedules by
   * name, or a Schedule's target (function ARN, role, input) as the API puts it.
   */
  schedulerFires(options: {
    schedule?: string;
    target?: { arn: string; roleArn: string; input: string };
    scheduledTime: Date;
  }): Promise<InvocationResult>;
  /** Makes matching AWS calls fail (test-environment fault injection); returns its removal. */
  inject(fault: Fault): () => void;
  /** See EventSources.redeliverAfter. */
  redeliverAfter(seconds: number | undefined): Promise<void>;
  report(): RehearsalReport;
  stop(): Promise<void>;
}

function encryptionKeys(deployment: Deployment): EncryptionKeys {
  const { resolver, assembly } = deployment;
  const byBucket = new Map<string, string>();
  for (const [id, r] of resourcesOf(assembly.template, 'AWS::S3::Bucket')) {
    const encryption = resolve(resolver, r.Properties?.BucketEncryption ?? null) as {
      ServerSideEncryptionConfiguration?: { ServerSideEncryptionByDefault?: { KMSMasterKeyID?: string } }[];
    } | null;
    const key =
      encryption?.ServerSideEncryptionConfiguration?.[0]?.ServerSideEncryptionByDefault?.KMSMasterKeyID;
    const bucket = resolver.physical.get(id)?.ref;
    if (key && bucket) byBucket.set(bucket, key);
  }
  const byQueue = new Map<string, string>();
  for (const [id, r] of resourcesOf(assembly.template, 'AWS::SQS::Queue')) {
    const key = r.Properties?.KmsMasterKeyId;
    const arn = resolver.physical.get(id)?.attributes.Arn;
    if (key && arn) byQueue.set(arn, resolveString(resolver, key));
  }
  const keyArn = (keyId: string) =>
    keyId.startsWith('arn:')
      ? keyId
      : ([...resolver.physical.values()].find((p) => p.attributes.KeyId === keyId)?.attributes.Arn ??
        `arn:aws:kms:${deployment.target.region}:${deployment.target.account}:key/${keyId}`);
  return {
    keyOfBucket: (bucket) => {
      const key = byBucket.get(bucket);
      return key ? keyArn(key) : undefined;
    },
    keyOfQueue: (queueArn) => {
      const key = byQueue.get(queueArn);
      return key ? keyArn(key) : undefined;
    },
    keyArn,
  };
}

/** A deployment's keys, and those of the buckets and queues of the deployments it trusts. */
function withTrusted(own: EncryptionKeys, trusted: readonly EncryptionKeys[]): EncryptionKeys {
  const first = <T>(pick: (keys: EncryptionKeys) => T | undefined): T | undefined =>
    [own, ...trusted].map(pick).find((k) => k !== undefined);
  return {
    keyOfBucket: (bucket) => first((k) => k.keyOfBucket(bucket)),
    keyOfQueue: (queueArn) => first((k) => k.keyOfQueue(queueArn)),
    keyArn: own.keyArn,
  };
}

async function startEks(options: {
  deployment: Deployment;
  tools: Tools;
  rootDir: string;
  rbacManifest: string;
  name?: string;
}): Promise<{ webhook: TokenWebhook; cluster: ClusterInfo; kubeConfig: KubeConfig }> {
  const [name = 'rehearsal'] = options.name ? [options.name] : REHEARSAL_CLUSTERS;
  const webhook = new TokenWebhook({
    cluster: name,
    deployment: options.deployment,
    entries: accessEntriesOf(options.deployment),
  });
  const url = await webhook.start();
  const cluster = await startCluster({
    name,
    rootDir: options.rootDir,
    tools: options.tools,
    tokenWebhookUrl: url,
  });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(cluster.kubeconfig);
  await installAccessPolicies(kubeConfig);
  await installLifeboatRbac(kubeConfig, options.rbacManifest);
  return { webhook, cluster, kubeConfig };
}

export async function startRehearsal(options: RehearsalOptions): Promise<Rehearsal> {
  const assembly = options.assembly ?? (await loadAssembly(await synthesizedAssembly()));
  options.alter?.(assembly);
  const gateway = new AwsGateway(options.aws.endpoint);
  const endpoint = await gateway.start();
  const rootDir = await mkdtemp(join(tmpdir(), 'lifeboat-rehearsal-'));
  const deployment = await deploy({
    assembly,
    target: {
      endpoint,
      region: options.aws.region,
      account: options.aws.accounts.source,
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
      ...options.target,
    },
  });
  const iam = new IamPolicies(deployment);
  for (const other of options.trusts ?? []) iam.trust(other);
  const meter = new Meter();
  const eks = await startEks({
    deployment,
    tools: options.tools,
    rootDir,
    rbacManifest: options.rbacManifest ?? RBAC_MANIFEST,
    ...(options.clusterName ? { name: options.clusterName } : {}),
  });
  const lambda = new LambdaService({ deployment, gateway: endpoint, iam, meter });
  const tasks = new EcsTasks({ deployment, gateway: endpoint, iam, meter });
  const stepFunctions = new StepFunctions({ deployment, lambda, tasks, iam, meter });
  const rules = new EventRules({ deployment, lambda });
  stepFunctions.onEnded = (execution) => rules.executionEnded(execution);
  const api = apiGateway({ deployment, lambda });
  const ca = await readFile(eks.cluster.caFile, 'utf8');
  gateway.attach({
    deployment,
    iam,
    meter,
    keys: withTrusted(encryptionKeys(deployment), (options.trusts ?? []).map(encryptionKeys)),
    clusters: new Map([[eks.cluster.name, { endpoint: eks.cluster.server, ca }]]),
    callbacks: stepFunctions,
    executions: stepFunctions,
  });
  const pollerErrors: string[] = [];
  const sources = await startEventSources({
    deployment,
    lambda,
    gateway: endpoint,
    onError: (error) => pollerErrors.push(error.message),
  });
  const bucket =
    resourcesOf(assembly.template, 'AWS::S3::Bucket')
      .map(([id]) => deployment.resolver.physical.get(id)?.ref ?? '')
      .find((b) => b.includes('backups')) ?? '';
  return {
    deployment,
    cluster: eks.cluster,
    kubeConfig: eks.kubeConfig,
    bucket,
    lambda,
    stepFunctions,
    iam,
    gateway: endpoint,
    api,
    settled: () => stepFunctions.settled(),
    start: (workflow, input) => {
      const machine = [...stepFunctions.machines.values()].find((m) => m.name.endsWith(`-${workflow}`));
      if (!machine) throw new Error(`rehearsal: the stack has no ${workflow} state machine`);
      return stepFunctions.startExecution({ stateMachine: machine.arn, input });
    },
    schedulerFires: (fire) => {
      const target = fire.target ?? templateScheduleTargets(deployment).get(fire.schedule ?? '');
      if (!target) throw new Error(`rehearsal: the template has no Scheduler schedule ${fire.schedule}`);
      return invokeAsScheduler({ target, scheduledTime: fire.scheduledTime, iam, lambda });
    },
    inject: (fault) => gateway.inject(fault),
    redeliverAfter: (seconds) => sources.redeliverAfter(seconds),
    report: () => ({
      violations: [
        ...iam.violations(),
        ...gateway.unclassified.map((u) => `unclassified: ${u}`),
        ...eks.webhook.refused.map((r) => `EKS refused ${r}`),
        ...rules.errors.map((e) => `EventBridge: ${e}`),
        ...api.errors.map((e) => `API Gateway: ${e}`),
      ],
      pollerErrors,
      unusedPermissions: iam.unusedPermissions(),
      usage: meter.usage(),
    }),
    stop: async () => {
      await stepFunctions.settled().catch(() => undefined);
      await sources.stop();
      await lambda.stop();
      await stopCluster(eks.cluster);
      await eks.webhook.stop();
      await gateway.stop();
      await rm(rootDir, { recursive: true, force: true });
    },
  };
}
