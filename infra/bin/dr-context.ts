/**
 * The cross-account DR settings of the CDK app, from context: `lifeboat:drTargets`
 * (`ACCOUNT:REGION[:KMS_KEY_ARN][:ROLE_ARN]`, comma-separated, or a JSON array; the role is
 * the one snapshot copies are made through), `lifeboat:replicateTo`
 * (JSON `{"bucketArn","kmsKeyArn","account"}`), `lifeboat:drSource` (the source bucket's or its
 * replica's ARN) with `lifeboat:drSourceKey`, `lifeboat:drSourcePrefix`,
 * `lifeboat:drSourceRegion`, `lifeboat:drSourceRepositoryKey` (the source's data-mover repository
 * key ARN: restores read the source's repository), and `lifeboat:crossAccountRestoreRoles` (role
 * ARNs, comma-separated).
 * A malformed value fails the synth naming its context key.
 */
import type { Node } from 'constructs';
import type { DrSource, DrTarget, ReplicaTarget } from '../constructs/dr-access.js';
import { checkKmsKeyArn } from '../constructs/dr-source-repository.js';
import type { LifeboatStackProps } from '../lifeboat-stack.js';

const text = (node: Node, key: string): string => String(node.tryGetContext(key) ?? '').trim();

function json(key: string, value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    throw new Error(`-c ${key} is not valid JSON: ${value}`);
  }
}

function drTargets(value: string): DrTarget[] {
  const key = 'lifeboat:drTargets';
  if (value.startsWith('[')) {
    const parsed = json(key, value);
    if (!Array.isArray(parsed)) throw new Error(`-c ${key} must be a JSON array`);
    return parsed.map((t, i) => {
      const { account, region, kmsKeyArn, roleArn } = (t ?? {}) as Record<string, unknown>;
      if (typeof account !== 'string' || typeof region !== 'string')
        throw new Error(`-c ${key}[${i}] needs "account" and "region"`);
      return {
        account,
        region,
        ...(typeof kmsKeyArn === 'string' ? { kmsKeyArn } : {}),
        ...(typeof roleArn === 'string' ? { roleArn: copyRole(`${key}[${i}].roleArn`, roleArn) } : {}),
      };
    });
  }
  return value
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)
    .map((t) => {
      // The copy role's ARN, when given, ends the entry: ACCOUNT:REGION[:KMS_KEY_ARN][:ROLE_ARN].
      const role = /:(arn:aws[\w-]*:iam::.*)$/.exec(t);
      const [account = '', region = '', ...key_] = (role ? t.slice(0, role.index) : t).split(':');
      if (!account || !region)
        throw new Error(`-c ${key}: "${t}" is not ACCOUNT:REGION[:KMS_KEY_ARN][:ROLE_ARN]`);
      const kmsKeyArn = key_.join(':');
      return {
        account,
        region,
        ...(kmsKeyArn ? { kmsKeyArn } : {}),
        ...(role?.[1] ? { roleArn: copyRole(key, role[1]) } : {}),
      };
    });
}

/** A DR target's copy role: an IAM role ARN, else the synth fails naming the key. */
function copyRole(key: string, roleArn: string): string {
  if (!/^arn:aws[\w-]*:iam::\d{12}:role\/.+$/.test(roleArn))
    throw new Error(`-c ${key} must be an IAM role ARN, not "${roleArn}"`);
  return roleArn;
}

function replicateTo(value: string): ReplicaTarget {
  const key = 'lifeboat:replicateTo';
  const { bucketArn, kmsKeyArn, account } = (json(key, value) ?? {}) as Record<string, unknown>;
  for (const [field, v] of Object.entries({ bucketArn, kmsKeyArn, account }))
    if (typeof v !== 'string' || !v) throw new Error(`-c ${key} needs "${field}"`);
  return { bucketArn: String(bucketArn), kmsKeyArn: String(kmsKeyArn), account: String(account) };
}

function drSource(node: Node): DrSource | undefined {
  const bucketArn = text(node, 'lifeboat:drSource');
  const repositoryKeyArn = text(node, 'lifeboat:drSourceRepositoryKey');
  if (repositoryKeyArn && !bucketArn)
    throw new Error('-c lifeboat:drSourceRepositoryKey needs -c lifeboat:drSource (the source bucket ARN)');
  if (repositoryKeyArn) checkKmsKeyArn('-c lifeboat:drSourceRepositoryKey', repositoryKeyArn);
  if (!bucketArn) return undefined;
  if (!/^arn:aws[\w-]*:s3:::[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucketArn))
    throw new Error(`-c lifeboat:drSource must be an S3 bucket ARN, not "${bucketArn}"`);
  const kmsKeyArn = text(node, 'lifeboat:drSourceKey');
  const prefix = text(node, 'lifeboat:drSourcePrefix');
  const region = text(node, 'lifeboat:drSourceRegion');
  return {
    bucketArn,
    ...(kmsKeyArn ? { kmsKeyArn } : {}),
    ...(prefix ? { prefix } : {}),
    ...(region ? { region } : {}),
    ...(repositoryKeyArn ? { repositoryKeyArn } : {}),
  };
}

/** The stack props the DR context keys give (none when no key is set). */
export function drContext(node: Node): Partial<LifeboatStackProps> {
  const targets = drTargets(text(node, 'lifeboat:drTargets'));
  const replica = text(node, 'lifeboat:replicateTo');
  const source = drSource(node);
  const roles = text(node, 'lifeboat:crossAccountRestoreRoles')
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  for (const role of roles)
    if (!/^arn:aws[\w-]*:iam::\d{12}:role\/.+$/.test(role))
      throw new Error(`-c lifeboat:crossAccountRestoreRoles must be role ARNs, not "${role}"`);
  return {
    ...(targets.length ? { drTargets: targets } : {}),
    ...(replica ? { replicateTo: replicateTo(replica) } : {}),
    ...(source ? { drSource: source } : {}),
    ...(roles.length ? { crossAccountRestoreRoles: roles } : {}),
  };
}
