/**
 * `copySnapshots`, Lifeboat's backup option beyond Velero (docs/disaster-recovery.md): where each
 * native EBS and EBS CSI snapshot is copied, re-encrypted with which key, through which role.
 * Validation reports every problem by its field path; it never throws on bad input.
 */
import * as z from 'zod';
import type { FieldProblem } from '../domain/errors.js';

const KMS_KEY = '(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|mrk-[0-9a-f]{32})';
const KMS_ALIAS = 'alias/[A-Za-z0-9/_-]{1,250}';
/** A key of the target region: an ARN (its region and account are checked), or an id or alias there. */
const KMS_KEY_ID = new RegExp(
  `^(?:${KMS_KEY}|${KMS_ALIAS}|arn:aws(?:-[a-z]+)*:kms:[a-z]{2}(?:-[a-z0-9]+)+-\\d:\\d{12}:(?:key/${KMS_KEY}|${KMS_ALIAS}))$`,
);
const ROLE_ARN = /^arn:aws[a-z-]*:iam::(\d{12}):role\/[\w+=,.@/-]{1,512}$/;

/** At most this many targets: each one is a copy of every snapshot, waited on. */
export const MAX_COPY_TARGETS = 5;

export const copySnapshotTarget = z.strictObject({
  /** The account the copies go to; absent: the backup's own (a copy into another region). */
  account: z
    .string()
    .regex(/^\d{12}$/, { message: 'must be a 12-digit AWS account id' })
    .optional(),
  region: z
    .string()
    .regex(/^[a-z]{2}(-[a-z0-9]+)+-\d$/, { message: 'must be an AWS region name, such as us-west-2' }),
  /** The target's key the copies are encrypted with (else the target's default EBS key). */
  kmsKeyId: z
    .string()
    .regex(KMS_KEY_ID, { message: 'must be a KMS key id, key ARN, alias name (alias/...) or alias ARN' })
    .optional(),
  /** The role in `account` the copies are made through (its trust policy names the backup's roles). */
  roleArn: z
    .string()
    .regex(ROLE_ARN, {
      message: 'must be an IAM role ARN, such as arn:aws:iam::210987654321:role/lifeboat-dr',
    })
    .optional(),
  externalId: z
    .string()
    .regex(/^[\w+=,.@:/-]{2,1224}$/, { message: 'must be 2-1224 characters of letters, digits and +=,.@:/-' })
    .optional(),
});

export type CopySnapshotTarget = z.infer<typeof copySnapshotTarget>;

export const copySnapshots = z.array(copySnapshotTarget).max(MAX_COPY_TARGETS, {
  message: `must name at most ${MAX_COPY_TARGETS} targets`,
});

/** What one target gets wrong across its fields: role and key of the account and region named. */
function targetProblems(target: CopySnapshotTarget, path: (field: string) => string): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const roleAccount = ROLE_ARN.exec(target.roleArn ?? '')?.[1];
  if (target.account && !target.roleArn)
    problems.push({
      path: path('roleArn'),
      message: `is required with account: the role in account ${target.account} the copies are made through`,
    });
  if (roleAccount && roleAccount !== target.account)
    problems.push({
      path: path('roleArn'),
      message: target.account
        ? `is a role of account ${roleAccount}, not of account ${target.account}`
        : `is a role of account ${roleAccount}: name it as account too`,
    });
  if (target.externalId && !target.roleArn)
    problems.push({ path: path('externalId'), message: 'needs roleArn' });
  const key = /^arn:aws[a-z-]*:kms:([a-z0-9-]+):(\d{12}):/.exec(target.kmsKeyId ?? '');
  if (key?.[1] && key[1] !== target.region)
    problems.push({
      path: path('kmsKeyId'),
      message: `is a key of ${key[1]}, not of region ${target.region}`,
    });
  if (key?.[2] && target.account && key[2] !== target.account)
    problems.push({
      path: path('kmsKeyId'),
      message: `is a key of account ${key[2]}, not of account ${target.account}`,
    });
  return problems;
}

/** Cross-field problems of `copySnapshots` under `prefix` (e.g. `backup.spec.copySnapshots`). */
export function copySnapshotsProblems(
  targets: readonly CopySnapshotTarget[] | undefined,
  prefix: string,
): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const seen = new Set<string>();
  for (const [i, target] of (targets ?? []).entries()) {
    problems.push(...targetProblems(target, (field) => `${prefix}[${i}].${field}`));
    const place = `${target.account ?? ''}/${target.region}`;
    if (seen.has(place))
      problems.push({
        path: `${prefix}[${i}]`,
        message: `names ${target.account ? `account ${target.account}` : "the backup's account"} and region ${target.region} twice`,
      });
    seen.add(place);
  }
  return problems;
}
