/**
 * The requests of copySnapshots in IAM's terms, for the rehearsal's gateway: sharing a snapshot
 * (ec2:ModifySnapshotAttribute, with the accounts added as `ec2:Add/userId`), the copy in its
 * target region (ec2:CopySnapshot on the source snapshot and on the new one, with its request
 * tags, and CreateTags while copying) and the grant on the snapshot's key (kms:CreateGrant with
 * its grantee and operations). Nothing is allowed here: the gateway evaluates what this names.
 */

/** What aws-requests.ts gives this module (its own types, structurally, without a cycle). */
interface ClassifyContext {
  readonly region: string;
}
interface RequestedAction {
  readonly action: string;
  readonly resources: readonly string[];
  readonly context?: Readonly<Record<string, string | string[]>>;
}

const snapshotArn = (region: string, id: string | null): string =>
  `arn:aws:ec2:${region}::snapshot/${id ?? '*'}`;

/** The form's values under keys matching the pattern, in order. */
const valuesOf = (form: URLSearchParams, key: RegExp): string[] =>
  [...form.entries()].filter(([k]) => key.test(k)).map(([, v]) => v);

/** ModifySnapshotAttribute or CopySnapshot, from the EC2 query form. */
export function snapshotCopyRequest(options: {
  operation: 'ModifySnapshotAttribute' | 'CopySnapshot';
  form: URLSearchParams;
  ctx: ClassifyContext;
  /** CreateTags of the request's TagSpecifications on the resource (aws-requests.ts). */
  tagged: (resource: string) => RequestedAction[];
}): { operation: string; actions: RequestedAction[] } {
  const { operation, form, ctx } = options;
  if (operation === 'ModifySnapshotAttribute') {
    const added = valuesOf(form, /^(UserId\.\d+|CreateVolumePermission\.Add\.\d+\.UserId)$/);
    const context: Record<string, string | string[]> = {
      'ec2:Attribute': form.get('Attribute') ?? '',
      ...(form.get('OperationType') === 'remove' ? {} : { 'ec2:Add/userId': added }),
    };
    return {
      operation,
      actions: [
        {
          action: 'ec2:ModifySnapshotAttribute',
          resources: [snapshotArn(ctx.region, form.get('SnapshotId'))],
          context,
        },
      ],
    };
  }
  const tagKeys = valuesOf(form, /^TagSpecification\.\d+\.Tag\.\d+\.Key$/);
  const requestTags = Object.fromEntries(
    [...form.entries()]
      .filter(([k]) => /^TagSpecification\.\d+\.Tag\.\d+\.Key$/.test(k))
      .map(([k, v]) => [`aws:RequestTag/${v}`, form.get(k.replace(/Key$/, 'Value')) ?? '']),
  );
  const source = snapshotArn(form.get('SourceRegion') ?? ctx.region, form.get('SourceSnapshotId'));
  return {
    operation,
    actions: [
      { action: 'ec2:CopySnapshot', resources: [source] },
      {
        action: 'ec2:CopySnapshot',
        resources: [snapshotArn(ctx.region, null)],
        context: { ...requestTags, 'aws:TagKeys': tagKeys },
      },
      ...options.tagged(snapshotArn(ctx.region, null)),
    ],
  };
}

/** kms:CreateGrant's condition keys: who is granted, and what. */
export function grantContext(body: Record<string, unknown>): Record<string, string | string[]> {
  const operations = Array.isArray(body.Operations) ? body.Operations.map(String) : [];
  return {
    ...(typeof body.GranteePrincipal === 'string' ? { 'kms:GranteePrincipal': body.GranteePrincipal } : {}),
    'kms:GrantOperations': operations,
  };
}
