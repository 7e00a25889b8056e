/**
 * One Lifeboat Lambda function, as every workflow builds them: bundled from
 * functions/<kebab-name>/handler.ts with the local esbuild (ESM, Node.js 22, arm64, X-Ray), with a
 * role of its own (or a shared one) allowed to write only its own log group, and the cdk-nag
 * acknowledgements every step function needs, with their reasons.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CfnElement, type Duration, Stack, Validations } from 'aws-cdk-lib';
import { CfnAccessEntry } from 'aws-cdk-lib/aws-eks';
import { type IRole, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Key } from 'aws-cdk-lib/aws-kms';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export function stepFunction(
  scope: Construct,
  name: string,
  options: { memoryMb: number; timeout: Duration; environment: Record<string, string>; role?: IRole },
): NodejsFunction {
  const stack = Stack.of(scope);
  const logGroup = new LogGroup(scope, `${name}Logs`, {
    logGroupName: `/aws/lambda/${stack.stackName}-${name}`,
    retention: RetentionDays.ONE_MONTH,
  });
  const role =
    options.role ??
    new Role(scope, `${name}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Lifeboat ${name}`,
    });
  logGroup.grantWrite(role);
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
    environment: options.environment,
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

/** Grants each function the backup bucket and key, and acknowledges what those grants imply. */
export function grantStorage(
  scope: Construct,
  options: {
    bucket: Bucket;
    key: Key;
    functions: readonly NodejsFunction[];
    invokedByStateMachine: readonly NodejsFunction[];
  },
): void {
  const stack = Stack.of(scope);
  for (const f of options.functions) {
    options.bucket.grantReadWrite(f);
    options.key.grantEncryptDecrypt(f);
  }
  const logicalId = (c: Construct): string => stack.getLogicalId(c.node.defaultChild as CfnElement);
  const acknowledge = (id: string, reason: string): void => Validations.of(scope).acknowledge({ id, reason });
  const grants =
    'CDK grant on the backup bucket and its key only; the functions read and write backup objects';
  for (const action of [
    's3:GetObject*',
    's3:GetBucket*',
    's3:List*',
    's3:DeleteObject*',
    's3:Abort*',
    'kms:ReEncrypt*',
    'kms:GenerateDataKey*',
  ]) {
    acknowledge(`AwsSolutions-IAM5[Action::${action}]`, grants);
  }
  acknowledge(
    `AwsSolutions-IAM5[Resource::<${logicalId(options.bucket)}.Arn>/*]`,
    `${grants}; object keys are dynamic`,
  );
  acknowledge(
    'AwsSolutions-IAM5[Resource::*]',
    'X-Ray PutTraceSegments and PutTelemetryRecords have no resource-level permissions',
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
}

/**
 * Lets a role reach EKS clusters by name: DescribeCluster and an access entry with the policy
 * (if any) and Kubernetes groups (bound by RBAC in the cluster, e.g. for pod exec).
 */
export function clusterAccess(
  scope: Construct,
  options: {
    role: IRole;
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
    new CfnAccessEntry(scope, `ClusterAccess${i}`, {
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
  },
): StateMachine {
  const logs = new LogGroup(scope, 'StateMachineLogs', {
    logGroupName: `/aws/vendedlogs/states/${options.name}`,
    retention: RetentionDays.ONE_MONTH,
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
