/**
 * The policies of a synthesized stack as they would be deployed in one account and region: every
 * intrinsic resolved (test/rehearsal/template.ts) against physical names made up here, so that
 * a source stack's bucket and key policies and a DR stack's role policies can be evaluated
 * together, across accounts, with the rehearsal's IAM simulator (@cloud-copilot/iam-simulate).
 */
import { runSimulation } from '@cloud-copilot/iam-simulate';
import type { Template as CdkTemplate } from 'aws-cdk-lib/assertions';
import { type Json, type Physical, type Resolver, resolve, type Template } from '../rehearsal/template.js';

export interface PolicyDocument {
  readonly Statement: readonly Record<string, Json>[];
}

export interface DeployedPolicies {
  readonly account: string;
  readonly region: string;
  /** Identity policies of each role, by the role's ARN. */
  readonly roles: ReadonlyMap<string, PolicyDocument[]>;
  /** Bucket policies by bucket ARN, key policies by key ARN. */
  readonly resources: ReadonlyMap<string, PolicyDocument>;
  /** The physical ARN of a resource, by a fragment of its logical id. */
  arnOf(logicalIdPart: string, type: string): string;
}

function physicalOf(options: { id: string; type: string; account: string; region: string }): Physical {
  const { id, type, account, region } = options;
  const name = `lb-${account}-${id.toLowerCase().slice(0, 40)}`;
  const arns: Record<string, string> = {
    'AWS::S3::Bucket': `arn:aws:s3:::${name}`,
    'AWS::KMS::Key': `arn:aws:kms:${region}:${account}:key/${name}`,
    'AWS::IAM::Role': `arn:aws:iam::${account}:role/${name}`,
    'AWS::SQS::Queue': `arn:aws:sqs:${region}:${account}:${name}`,
    'AWS::Lambda::Function': `arn:aws:lambda:${region}:${account}:function:${name}`,
    'AWS::StepFunctions::StateMachine': `arn:aws:states:${region}:${account}:stateMachine:${name}`,
    'AWS::Logs::LogGroup': `arn:aws:logs:${region}:${account}:log-group:${name}:*`,
  };
  const arn = arns[type] ?? `arn:aws:${type.split('::')[1]?.toLowerCase()}:${region}:${account}:${name}`;
  const ref = type === 'AWS::SQS::Queue' ? `https://sqs.${region}.amazonaws.com/${account}/${name}` : name;
  return {
    ref: type === 'AWS::StepFunctions::StateMachine' || type.startsWith('AWS::ECS::') ? arn : ref,
    attributes: {
      Arn: arn,
      KeyId: name,
      TaskDefinitionArn: arn,
      Name: name,
      QueueName: name,
      QueueUrl: ref,
      RoleId: `AROA${name}`,
    },
  };
}

/** The stack's policies as deployed into `account` and `region`. */
export function deployedPolicies(options: {
  template: CdkTemplate;
  account: string;
  region: string;
}): DeployedPolicies {
  const { account, region } = options;
  const template = options.template.toJSON() as Template;
  const physical = new Map<string, Physical>();
  for (const [id, r] of Object.entries(template.Resources))
    physical.set(id, physicalOf({ id, type: r.Type, account, region }));
  const resolver: Resolver = { account, region, stackName: 'Lifeboat', physical };
  const roles = new Map<string, PolicyDocument[]>();
  const resources = new Map<string, PolicyDocument>();
  for (const [, r] of Object.entries(template.Resources)) {
    const props = r.Properties ?? {};
    if (r.Type === 'AWS::IAM::Policy')
      for (const role of (props.Roles ?? []) as Json[]) {
        const arn = `arn:aws:iam::${account}:role/${String(resolve(resolver, role))}`;
        const document = resolve(resolver, props.PolicyDocument ?? null) as unknown as PolicyDocument;
        roles.set(arn, [...(roles.get(arn) ?? []), document]);
      }
    if (r.Type === 'AWS::S3::BucketPolicy')
      resources.set(
        `arn:aws:s3:::${String(resolve(resolver, props.Bucket ?? null))}`,
        resolve(resolver, props.PolicyDocument ?? null) as unknown as PolicyDocument,
      );
  }
  for (const [id, r] of Object.entries(template.Resources))
    if (r.Type === 'AWS::KMS::Key')
      resources.set(
        physical.get(id)?.attributes.Arn ?? '',
        resolve(resolver, r.Properties?.KeyPolicy ?? null) as unknown as PolicyDocument,
      );
  const arnOf = (part: string, type: string): string => {
    const found = Object.entries(template.Resources).find(([id, r]) => r.Type === type && id.includes(part));
    if (!found) throw new Error(`no ${type} whose id has ${part}`);
    return physical.get(found[0])?.attributes.Arn ?? '';
  };
  return { account, region, roles, resources, arnOf };
}

/** The roles of a deployment whose logical ids hold a fragment, by ARN. */
export function rolesNamed(policies: DeployedPolicies, part: string): string[] {
  return [...policies.roles.keys()].filter((arn) => arn.toLowerCase().includes(part.toLowerCase()));
}

/**
 * Whether a role of one deployment may make a call on a resource of another (or the same): its
 * identity policies and the resource's policy (bucket or key), as AWS evaluates across accounts.
 */
export async function mayCall(options: {
  principal: { roleArn: string; policies: readonly PolicyDocument[] };
  action: string;
  resource: string;
  resourceAccount: string;
  resourcePolicy?: PolicyDocument;
  context?: Record<string, string>;
}): Promise<boolean> {
  const { principal } = options;
  const session = principal.roleArn.replace(
    /^arn:aws:iam::(\d+):role\/(.+)$/,
    'arn:aws:sts::$1:assumed-role/$2/infra-test',
  );
  const response = await runSimulation(
    {
      request: {
        principal: session,
        action: options.action,
        resource: { resource: options.resource, accountId: options.resourceAccount },
        contextVariables: {
          'aws:SecureTransport': 'true',
          'aws:PrincipalArn': principal.roleArn,
          'aws:PrincipalAccount': principal.roleArn.split(':')[4] ?? '',
          ...options.context,
        },
      },
      identityPolicies: principal.policies.map((policy, i) => ({ name: `p${i}`, policy })),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      ...(options.resourcePolicy ? { resourcePolicy: options.resourcePolicy } : {}),
    } as never,
    {},
  );
  if (response.resultType === 'error')
    throw new Error(`simulation failed: ${JSON.stringify(response.errors)}`);
  return response.overallResult === 'Allowed';
}

/**
 * A function's environment as deployed into `account` and `region`: its template variables with
 * every intrinsic resolved against the same made-up physical names as deployedPolicies.
 */
export function deployedEnvironment(options: {
  template: CdkTemplate;
  account: string;
  region: string;
  functionName: string;
}): Record<string, string> {
  const { account, region } = options;
  const template = options.template.toJSON() as Template;
  const physical = new Map<string, Physical>();
  for (const [id, r] of Object.entries(template.Resources))
    physical.set(id, physicalOf({ id, type: r.Type, account, region }));
  const resolver: Resolver = { account, region, stackName: 'Lifeboat', physical };
  const found = Object.values(template.Resources).find(
    (r) => r.Type === 'AWS::Lambda::Function' && r.Properties?.FunctionName === options.functionName,
  );
  if (!found) throw new Error(`no function ${options.functionName}`);
  const variables = (found.Properties?.Environment as { Variables?: Json } | undefined)?.Variables ?? {};
  return Object.fromEntries(
    Object.entries(resolve(resolver, variables) as Record<string, Json>).map(([k, v]) => [k, String(v)]),
  );
}
