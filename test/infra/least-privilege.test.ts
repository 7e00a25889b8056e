/**
 * Least privilege and immutability, read from the synthesized template: every function has a
 * role of its own; no role may delete a backup's objects (only a deletion may, and Lambda has
 * none), none may delete object versions; writes are scoped to the areas of each step; every log
 * group is encrypted; versions no longer current expire; Object Lock is on when asked, and only
 * the writers of backups set retentions.
 */
import { App, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { LifeboatStack, type LifeboatStackProps } from '../../infra/lifeboat-stack.js';
import { iamMatch } from '../rehearsal/iam.js';

interface Statement {
  readonly Effect: string;
  readonly Action: string | string[];
  readonly Resource: unknown;
}

function synth(props: Partial<LifeboatStackProps> = {}): { stack: Stack; template: Template } {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new LifeboatStack(app, 'Lifeboat', {
    env: { account: '123456789012', region: 'us-east-1' },
    clusters: ['prod-a'],
    ...props,
  });
  return { stack, template: Template.fromStack(stack) };
}

const actions = (s: Statement): string[] => (Array.isArray(s.Action) ? s.Action : [s.Action]);
const grants = (s: Statement, action: string) =>
  s.Effect === 'Allow' && actions(s).some((a) => iamMatch(a, action, { caseless: true }));

/** Each role's statements, by the role's logical id. */
function statementsByRole(template: Template): Map<string, Statement[]> {
  const byRole = new Map<string, Statement[]>();
  for (const policy of Object.values(template.findResources('AWS::IAM::Policy'))) {
    for (const role of policy.Properties.Roles as { Ref: string }[])
      byRole.set(role.Ref, [
        ...(byRole.get(role.Ref) ?? []),
        ...(policy.Properties.PolicyDocument.Statement as Statement[]),
      ]);
  }
  return byRole;
}

/** The object paths a statement's resources name below the bucket (`backups/*`, `*`, …). */
function objectPaths(statement: Statement, bucketId: string): string[] {
  const resources = Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
  return resources.flatMap((r) => {
    const join = (r as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
    const parts = join?.[1] ?? [];
    const onBucket = JSON.stringify(parts[0] ?? null).includes(bucketId);
    return onBucket && typeof parts[1] === 'string' ? [parts[1].replace(/^\//, '')] : [];
  });
}

describe('least privilege in the stack', () => {
  const { template } = synth();
  const byRole = statementsByRole(template);
  const bucketId =
    Object.keys(template.findResources('AWS::S3::Bucket')).find((id) => id.includes('Backups')) ?? '?';

  it('gives every function a role of its own', () => {
    const roles = Object.values(template.findResources('AWS::Lambda::Function')).map((f) =>
      JSON.stringify(f.Properties.Role),
    );
    expect(roles.length).toBeGreaterThanOrEqual(19);
    expect(new Set(roles).size).toBe(roles.length);
  });

  it('lets only the delete workflow’s DeleteBackup delete a backup’s objects, and no role any object version', () => {
    const deleting: string[] = [];
    for (const [role, statements] of byRole) {
      for (const s of statements) {
        if (grants(s, 's3:DeleteObjectVersion')) deleting.push(`${role}: s3:DeleteObjectVersion`);
        if (!grants(s, 's3:DeleteObject')) continue;
        for (const path of objectPaths(s, bucketId))
          if (iamMatch(path, 'backups/nightly/velero-backup.json', { caseless: false }))
            deleting.push(`${role.replace(/Role[0-9A-F]{8}$/, '')}: s3:DeleteObject on ${path}`);
      }
    }
    expect(deleting).toEqual(['DeleteDeleteBackup: s3:DeleteObject on backups/*']);
  });

  it('lets only FinalizeBackup and RecordBackupFailure write under backups/, and no role write everywhere', () => {
    const writers = new Set<string>();
    for (const [role, statements] of byRole)
      for (const s of statements.filter((x) => grants(x, 's3:PutObject')))
        for (const path of objectPaths(s, bucketId)) {
          expect(path).not.toBe('*');
          if (iamMatch(path, 'backups/nightly/velero-backup.json', { caseless: false })) writers.add(role);
        }
    expect([...writers].map((r) => r.replace(/Role[0-9A-F]{8}$/, '')).sort()).toEqual([
      'BackupFinalizeBackup',
      'BackupRecordBackupFailure',
    ]);
  });

  it('encrypts every log group with a KMS key', () => {
    const groups = Object.values(template.findResources('AWS::Logs::LogGroup'));
    expect(groups.length).toBeGreaterThan(20);
    for (const g of groups) expect(g.Properties.KmsKeyId).toBeDefined();
  });

  it('expires versions that are no longer current, and has no Object Lock unless asked', () => {
    const bucket = template.findResources('AWS::S3::Bucket')[bucketId];
    expect(bucket?.Properties.LifecycleConfiguration.Rules).toContainEqual(
      expect.objectContaining({ NoncurrentVersionExpiration: { NoncurrentDays: 30 }, Status: 'Enabled' }),
    );
    expect(bucket?.Properties.ObjectLockEnabled).toBeUndefined();
  });

  it('turns Object Lock on when asked, and lets only the writers of backups set retentions', () => {
    const locked = synth({ objectLock: { mode: 'COMPLIANCE' } }).template;
    const bucket = Object.entries(locked.findResources('AWS::S3::Bucket')).find(([id]) =>
      id.includes('Backups'),
    )?.[1];
    expect(bucket?.Properties.ObjectLockEnabled).toBe(true);
    const retaining = [...statementsByRole(locked)]
      .filter(([, statements]) => statements.some((s) => grants(s, 's3:PutObjectRetention')))
      .map(([role]) => role.replace(/Role[0-9A-F]{8}$/, ''));
    expect(retaining.sort()).toEqual(['BackupFinalizeBackup', 'BackupRecordBackupFailure']);
    for (const f of Object.values(locked.findResources('AWS::Lambda::Function')))
      expect(f.Properties.Environment.Variables.LIFEBOAT_OBJECT_LOCK_MODE).toBe('COMPLIANCE');
  });
});
