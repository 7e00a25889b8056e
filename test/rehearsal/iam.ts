/**
 * IAM as the deployed stack would meet it: every AWS call a function, task or state machine makes
 * in the rehearsal is evaluated against the policies the template gives its role (and the
 * bucket, key or queue policy of the resource), with @cloud-copilot/iam-simulate. A call the
 * policies do not allow is a violation (and is answered AccessDenied, as AWS would); permissions
 * granted that no call used are reported.
 *
 * One rule the simulator's data gets wrong is handled here: states:SendTask{Success,Failure,
 * Heartbeat} lists no resource type, yet Step Functions evaluates it against the state machine
 * whose task token it is (a role allowed only on another state machine is refused).
 */
import { runSimulation } from '@cloud-copilot/iam-simulate';
import type { Deployment } from './deploy.js';
import { withEncryptionContextDecided } from './kms-context-conditions.js';
import { type Json, type Resolver, resolve, resourcesOf } from './template.js';

export interface AwsCall {
  /** The role ARN whose credentials signed the call. */
  readonly principal: string;
  /** `service:Action`, as IAM names it. */
  readonly action: string;
  /** The ARNs the action is authorized against ('*' when it has no resource). */
  readonly resources: readonly string[];
  readonly context?: Readonly<Record<string, string | string[]>>;
  /** Who made it, for reports: the function, task or state machine. */
  readonly caller: string;
}

export interface Decision {
  readonly call: AwsCall;
  readonly allowed: boolean;
  readonly detail: string;
}

interface Statement {
  readonly Effect: 'Allow' | 'Deny';
  readonly Action?: string | string[];
  readonly NotAction?: string | string[];
  readonly Resource?: string | string[];
  readonly Condition?: Record<string, Record<string, string | string[]>>;
}

interface PolicyDocument {
  readonly Version?: string;
  readonly Statement: Statement[];
}

const list = (v: string | string[] | undefined): string[] =>
  v === undefined ? [] : Array.isArray(v) ? v : [v];

/** IAM's wildcard match (`*` any run, `?` one character), case-insensitive for actions. */
export function iamMatch(pattern: string, value: string, options: { caseless: boolean }): boolean {
  const escaped = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`, options.caseless ? 'i' : '').test(value);
}

const SEND_TASK = /^states:SendTask(Success|Failure|Heartbeat)$/i;

export class IamPolicies {
  /** Identity policies by role ARN (inline policies attached to it in the template). */
  private readonly identity = new Map<string, { name: string; policy: PolicyDocument }[]>();
  /** Resource policies by the ARN they protect (bucket, key, queue). */
  private readonly resource = new Map<string, PolicyDocument>();
  /** The account owning each bucket of another deployment whose policies apply here (`trust`). */
  private readonly bucketAccounts = new Map<string, string>();
  readonly decisions: Decision[] = [];

  constructor(private readonly deployment: Deployment) {
    const { template } = deployment.assembly;
    const { resolver } = deployment;
    for (const [id, r] of resourcesOf(template, 'AWS::IAM::Policy')) {
      const props = r.Properties ?? {};
      const policy = resolve(resolver, props.PolicyDocument ?? null) as unknown as PolicyDocument;
      for (const role of (props.Roles ?? []) as Json[]) {
        const roleName = String(resolve(resolver, role));
        const arn = [...resolver.physical.values()].find((p) => p.ref === roleName)?.attributes.Arn;
        if (!arn) continue;
        this.identity.set(arn, [...(this.identity.get(arn) ?? []), { name: id, policy }]);
      }
    }
    this.readResourcePolicies(deployment);
  }

  /**
   * Applies another deployment's bucket, key and queue policies to calls on its resources (a DR
   * stack reading its source's bucket, in another account: both that resource policy and the
   * caller's identity policy must allow). Trusting a deployment again with another assembly is
   * that stack's update: its resource policies replace the earlier ones.
   */
  trust(other: Deployment): void {
    this.readResourcePolicies(other);
    for (const [id] of resourcesOf(other.assembly.template, 'AWS::S3::Bucket')) {
      const bucket = other.resolver.physical.get(id)?.ref;
      if (bucket) this.bucketAccounts.set(`arn:aws:s3:::${bucket}`, other.target.account);
    }
  }

  /**
   * A role of another account whose credentials the deployment's callers obtain (a DR account's
   * snapshot-copy role, made by its operators, not by a template): its trust policy guards
   * sts:AssumeRole on it, and its policy the calls made with it.
   */
  adoptRole(options: { roleArn: string; name: string; trustPolicy: Json; policy: Json }): void {
    this.resource.set(options.roleArn, options.trustPolicy as unknown as PolicyDocument);
    this.identity.set(options.roleArn, [
      { name: options.name, policy: options.policy as unknown as PolicyDocument },
    ]);
  }

  private readResourcePolicies(deployment: Deployment): void {
    const { template } = deployment.assembly;
    const { resolver } = deployment;
    const protect = (type: string, target: string, document: string) => {
      for (const [, r] of resourcesOf(template, type)) {
        const props = r.Properties ?? {};
        const policy = resolve(resolver, props[document] ?? null) as unknown as PolicyDocument;
        for (const arn of this.protectedArns({ resolver, type, target: props[target] ?? null }))
          this.resource.set(arn, policy);
      }
    };
    protect('AWS::S3::BucketPolicy', 'Bucket', 'PolicyDocument');
    protect('AWS::SQS::QueuePolicy', 'Queues', 'PolicyDocument');
    for (const [id, r] of resourcesOf(template, 'AWS::KMS::Key')) {
      const arn = resolver.physical.get(id)?.attributes.Arn;
      if (arn)
        this.resource.set(
          arn,
          resolve(resolver, r.Properties?.KeyPolicy ?? null) as unknown as PolicyDocument,
        );
    }
  }

  private protectedArns(options: { resolver: Resolver; type: string; target: Json }): string[] {
    const { resolver } = options;
    if (options.type === 'AWS::S3::BucketPolicy')
      return [`arn:aws:s3:::${String(resolve(resolver, options.target))}`];
    const urls = resolve(resolver, options.target) as string[];
    return urls.flatMap((url) => {
      const physical = [...resolver.physical.values()].find((p) => p.ref === url);
      return physical?.attributes.Arn ? [physical.attributes.Arn] : [];
    });
  }

  /** Whether a resource belongs to another account than this deployment's (a trusted one's bucket or key). */
  isForeign(arn: string): boolean {
    return this.accountOf(arn) !== this.deployment.target.account;
  }

  /**
   * The account a resource belongs to: a trusted deployment's bucket's, an ARN's own, or this
   * one; an ARN naming no account (an EC2 snapshot, `*`) is evaluated in the caller's account
   * (`principal`), as a shared snapshot is governed by its sharing, not by a resource policy.
   */
  private accountOf(arn: string, principal?: string): string {
    const bucket = /^arn:aws:s3:::([^/]+)/.exec(arn);
    if (bucket) return this.bucketAccounts.get(`arn:aws:s3:::${bucket[1]}`) ?? this.deployment.target.account;
    const account = arn.split(':')[4] ?? '';
    const caller = principal?.split(':')[4] ?? '';
    if (/^\d{12}$/.test(account)) return account;
    return /^\d{12}$/.test(caller) ? caller : this.deployment.target.account;
  }

  /**
   * The bucket, key or queue policy guarding an ARN, if any. A KMS key no template made (a
   * customer key of the account's, CreateKey'd without a policy) has AWS's default key policy:
   * its account's IAM policies decide.
   */
  private resourcePolicyOf(arn: string): PolicyDocument | undefined {
    const bucket = /^arn:aws:s3:::([^/]+)/.exec(arn);
    const known = this.resource.get(bucket ? `arn:aws:s3:::${bucket[1]}` : arn);
    const key = /^arn:aws:kms:[^:]+:(\d{12}):key\//.exec(arn);
    if (known || !key) return known;
    const root = { AWS: `arn:aws:iam::${key[1]}:root` };
    return {
      Statement: [{ Effect: 'Allow', Principal: root, Action: 'kms:*', Resource: '*' }],
    } as unknown as PolicyDocument;
  }

  /** Evaluates one call, records the decision and returns it. */
  async evaluate(call: AwsCall): Promise<Decision> {
    const decision = SEND_TASK.test(call.action)
      ? this.evaluateSendTask(call)
      : await this.simulateEach(call);
    this.decisions.push(decision);
    return decision;
  }

  private async simulateEach(call: AwsCall): Promise<Decision> {
    const identityPolicies = withEncryptionContextDecided(
      this.identity.get(call.principal) ?? [],
      call.context,
    );
    const session = call.principal.replace(
      /^arn:aws:iam::(\d+):role\/(.+)$/,
      'arn:aws:sts::$1:assumed-role/$2/rehearsal',
    );
    for (const resource of call.resources) {
      const response = await runSimulation(
        {
          request: {
            principal: session,
            action: call.action,
            resource: { resource, accountId: this.accountOf(resource, call.principal) },
            contextVariables: {
              'aws:SecureTransport': 'true',
              'aws:PrincipalArn': call.principal,
              'aws:PrincipalAccount': call.principal.split(':')[4] ?? '',
              ...call.context,
            },
          },
          identityPolicies,
          serviceControlPolicies: [],
          resourceControlPolicies: [],
          ...(this.resourcePolicyOf(resource) ? { resourcePolicy: this.resourcePolicyOf(resource) } : {}),
        } as never,
        {},
      );
      const outcome =
        response.resultType === 'error' ? `error ${JSON.stringify(response.errors)}` : response.overallResult;
      if (outcome !== 'Allowed')
        return { call, allowed: false, detail: `${call.action} on ${resource}: ${outcome}` };
    }
    return { call, allowed: true, detail: 'Allowed' };
  }

  private evaluateSendTask(call: AwsCall): Decision {
    const statements = (this.identity.get(call.principal) ?? []).flatMap((p) => p.policy.Statement);
    const applies = (s: Statement) =>
      list(s.Action).some((a) => iamMatch(a, call.action, { caseless: true })) &&
      call.resources.every((r) => list(s.Resource).some((p) => iamMatch(p, r, { caseless: false })));
    if (statements.some((s) => s.Effect === 'Deny' && applies(s)))
      return { call, allowed: false, detail: `${call.action}: ExplicitlyDenied` };
    const allowed = statements.some((s) => s.Effect === 'Allow' && !s.Condition && applies(s));
    return {
      call,
      allowed,
      detail: allowed ? 'Allowed' : `${call.action} on ${call.resources.join(', ')}: ImplicitlyDenied`,
    };
  }

  /** Every refused call, one line each. */
  violations(): string[] {
    return this.decisions
      .filter((d) => !d.allowed)
      .map((d) => `${d.call.caller} (${d.call.principal}): ${d.detail}`);
  }

  /** Per role: the allowed actions of its policies that no recorded call of that role used. */
  unusedPermissions(): Map<string, string[]> {
    const unused = new Map<string, string[]>();
    for (const [role, policies] of this.identity) {
      const used = this.decisions
        .filter((d) => d.allowed && d.call.principal === role)
        .map((d) => d.call.action);
      const granted = policies.flatMap((p) =>
        p.policy.Statement.filter((s) => s.Effect === 'Allow').flatMap((s) => list(s.Action)),
      );
      const idle = [...new Set(granted)].filter((g) => !used.some((u) => iamMatch(g, u, { caseless: true })));
      if (idle.length > 0) unused.set(role, idle.sort());
    }
    return unused;
  }
}
