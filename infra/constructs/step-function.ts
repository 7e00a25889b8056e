/**
 * One Lifeboat Lambda function, as every workflow builds them: bundled from
 * functions/<kebab-name>/handler.ts with the local esbuild (ESM, Node.js 22, arm64, X-Ray), with a
 * role of its own allowed to write only its own log group (encrypted with the storage key), the
 * storage areas its step writes and the clusters it reaches; and the cdk-nag acknowledgements every
 * step function needs, with their reasons.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CfnElement, type Duration, Stack, Validations } from 'aws-cdk-lib';
import { CfnAccessEntry } from 'aws-cdk-lib/aws-eks';
import { type IRole, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import { acknowledgeDrSourceRead, drSourceEnvironment, grantDrSourceRead } from './dr-access.js';
import {
  acknowledgeStorageAccess,
  type BackupStore,
  grantStorageAccess,
  type StorageAccess,
} from './storage-access.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** How a function reaches the clusters it works on (see clusterAccess). */
export interface FunctionClusterAccess {
  readonly clusters: readonly string[];
  readonly accessPolicy?: 'AmazonEKSAdminViewPolicy' | 'AmazonEKSClusterAdminPolicy';
  readonly kubernetesGroups?: readonly string[];
}

export interface StepFunctionOptions {
  readonly memoryMb: number;
  readonly timeout: Duration;
  readonly environment: Record<string, string>;
  /** The backup storage: read by every function; written and deleted as `access` says. */
  readonly store: BackupStore;
  readonly access: StorageAccess;
  /** The clusters the function reaches, and with what; none when it never reaches one. */
  readonly cluster?: FunctionClusterAccess;
}

/**
 * A function with a role of its own (least privilege: what one step does, nothing another step
 * needs), its log group encrypted with the storage key, its storage grants and its EKS access.
 */
export function stepFunction(scope: Construct, name: string, options: StepFunctionOptions): NodejsFunction {
  const stack = Stack.of(scope);
  const logGroup = new LogGroup(scope, `${name}Logs`, {
    logGroupName: `/aws/lambda/${stack.stackName}-${name}`,
    retention: RetentionDays.ONE_MONTH,
    encryptionKey: options.store.key,
  });
  const role = new Role(scope, `${name}Role`, {
    assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
    description: `Lifeboat ${name}`,
  });
  logGroup.grantWrite(role);
  grantStorageAccess({ grantee: role, store: options.store, access: options.access });
  if (options.cluster) clusterAccess(scope, { role, idPrefix: name, ...options.cluster });
  const { drSource } = options.store;
  if (drSource) grantDrSourceRead({ grantee: role, source: drSource });
  return new NodejsFunction(scope, name, {
    functionName: `${stack.stackName}-${name}`,
    entry: join(
      ROOT,
      'functions',
      name.replace(/[A-Z]/g, (c, i: number) => (i ? '-' : '') + c.toLowerCase()),
      'handler.ts',
    ),
    handler: 'handler',
    runtime: Runtime.NODEJS_22_X,
    architecture: Architecture.ARM_64,
    memorySize: options.memoryMb,
    timeout: options.timeout,
    tracing: Tracing.ACTIVE,
    environment: {
      ...options.environment,
      ...(options.store.objectLockMode ? { LIFEBOAT_OBJECT_LOCK_MODE: options.store.objectLockMode } : {}),
      ...(drSource
        ? drSourceEnvironment({ source: drSource, region: stack.region, account: stack.account })
        : {}),
    },
    logGroup,
    role,
    bundling: {
      format: OutputFormat.ESM,
      minify: true,
      sourceMap: true,
      target: 'node22',
      mainFields: ['module', 'main'],
      // An ES module bundle of CommonJS packages that require Node's built-ins (the Kubernetes
      // client's fetch stack requires 'punycode'): esbuild's require shim refuses them.
      banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    },
  });
}

/** What every workflow's functions imply for cdk-nag, acknowledged with the reasons. */
export function acknowledgeStepFunctions(
  scope: Construct,
  options: { store: BackupStore; invokedByStateMachine: readonly NodejsFunction[] },
): void {
  const stack = Stack.of(scope);
  const logicalId = (c: Construct): string => stack.getLogicalId(c.node.defaultChild as CfnElement);
  const acknowledge = (id: string, reason: string): void => Validations.of(scope).acknowledge({ id, reason });
  acknowledgeStorageAccess(scope, options.store);
  if (options.store.drSource) acknowledgeDrSourceRead(scope, options.store.drSource);
  acknowledge(
    'AwsSolutions-IAM5[Resource::*]',
    'X-Ray PutTraceSegments and PutTelemetryRecords, ec2:Describe* have no resource-level permissions',
  );
  for (const f of options.invokedByStateMachine) {
    acknowledge(
      `AwsSolutions-IAM5[Resource::<${logicalId(f)}.Arn>:*]`,
      'The state machine invokes versions of its own step functions',
    );
  }
  acknowledge(
    'AwsSolutions-L1',
    'Lambda runtime pinned to nodejs22.x, the runtime the project targets and tests',
  );
  for (const action of ['kms:ReEncrypt*', 'kms:GenerateDataKey*'])
    acknowledge(
      `AwsSolutions-IAM5[Action::${action}]`,
      "CDK's grant to send to the KMS-encrypted ItemBlock queue: on the storage key only",
    );
}

/**
 * Lets a role reach EKS clusters by name: DescribeCluster and an access entry with the policy
 * (if any) and Kubernetes groups (bound by RBAC in the cluster, e.g. for pod exec).
 */
export function clusterAccess(
  scope: Construct,
  options: {
    role: IRole;
    /** Distinguishes the access entries of several roles in one scope. */
    idPrefix?: string;
    clusters: readonly string[];
    accessPolicy?: 'AmazonEKSAdminViewPolicy' | 'AmazonEKSClusterAdminPolicy';
    kubernetesGroups?: readonly string[];
  },
): void {
  const stack = Stack.of(scope);
  if (options.clusters.length === 0) return;
  options.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['eks:DescribeCluster'],
      resources: options.clusters.map((c) =>
        stack.formatArn({ service: 'eks', resource: 'cluster', resourceName: c }),
      ),
    }),
  );
  for (const [i, clusterName] of options.clusters.entries()) {
    new CfnAccessEntry(scope, `${options.idPrefix ?? ''}ClusterAccess${i}`, {
      clusterName,
      principalArn: options.role.roleArn,
      type: 'STANDARD',
      ...(options.kubernetesGroups?.length ? { kubernetesGroups: [...options.kubernetesGroups] } : {}),
      accessPolicies: options.accessPolicy
        ? [
            {
              policyArn: `arn:aws:eks::aws:cluster-access-policy/${options.accessPolicy}`,
              accessScope: { type: 'cluster' },
            },
          ]
        : [],
    });
  }
}

/** A Standard state machine from an ASL file with substitutions, logging every event without data. */
export function workflowStateMachine(
  scope: Construct,
  options: {
    name: string;
    definitionFile: string;
    substitutions: Record<string, string>;
    invokes: readonly NodejsFunction[];
    /** Encrypts the execution log. */
    logKey: IKey;
  },
): StateMachine {
  const logs = new LogGroup(scope, 'StateMachineLogs', {
    logGroupName: `/aws/vendedlogs/states/${options.name}`,
    retention: RetentionDays.ONE_MONTH,
    encryptionKey: options.logKey,
  });
  const machine = new StateMachine(scope, 'StateMachine', {
    stateMachineName: options.name,
    stateMachineType: StateMachineType.STANDARD,
    definitionBody: DefinitionBody.fromString(readFileSync(options.definitionFile, 'utf8')),
    definitionSubstitutions: options.substitutions,
    tracingEnabled: true,
    // Every event, without execution data: requests carry cluster object names.
    logs: { destination: logs, level: LogLevel.ALL, includeExecutionData: false },
  });
  for (const f of options.invokes) f.grantInvoke(machine);
  return machine;
}
