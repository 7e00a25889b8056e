/**
 * What an AWS API request asks for, in IAM's terms: the signer's access key, the service, and
 * the actions with the ARNs each is authorized against — including the KMS actions S3 and SQS
 * perform on the caller's behalf for KMS-encrypted buckets and queues. Read from the request
 * alone (SigV4 credential scope, X-Amz-Target, query protocol, S3 and REST paths), as the
 * rehearsal's gateway sees it. A request it cannot classify is reported, never let through.
 */

import { snapshotCopyRequest } from './copy-requests.js';
import { kmsRequestContext } from './kms-requests.js';
import { schedulerRequest } from './scheduler-requests.js';

export interface SignedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly body: Buffer;
}

export interface RequestedAction {
  readonly action: string;
  readonly resources: readonly string[];
  readonly context?: Readonly<Record<string, string | string[]>>;
}

export interface ClassifiedRequest {
  readonly accessKeyId: string | undefined;
  readonly service: string;
  /** The API operation (`GetObject`, `SendMessage`, …), for the cost meter. */
  readonly operation: string;
  readonly actions: readonly RequestedAction[];
}

/** Where the account's KMS-encrypted buckets and queues keep their keys. */
export interface EncryptionKeys {
  keyOfBucket(bucket: string): string | undefined;
  keyOfQueue(queueArn: string): string | undefined;
  /** A key's ARN from whatever a request names it by (id, ARN). */
  keyArn(keyId: string): string;
}

export interface ClassifyContext {
  readonly region: string;
  readonly account: string;
  readonly keys: EncryptionKeys;
}

export class UnclassifiedRequest extends Error {
  override name = 'UnclassifiedRequest';
}

function credentialScope(request: SignedRequest): {
  accessKeyId?: string;
  region?: string;
  service?: string;
} {
  const header = request.headers.authorization ?? '';
  const credential = /Credential=([^,\s]+)/.exec(header)?.[1] ?? request.query.get('X-Amz-Credential') ?? '';
  const [accessKeyId, , region, service] = credential.split('/');
  return {
    ...(accessKeyId ? { accessKeyId } : {}),
    ...(region ? { region } : {}),
    ...(service ? { service } : {}),
  };
}

const viaService = (service: string, region: string) => ({
  'kms:ViaService': `${service}.${region}.amazonaws.com`,
});

function s3Object(options: { bucket: string; key: string; request: SignedRequest; ctx: ClassifyContext }) {
  const { bucket, key, request, ctx } = options;
  const { method, query } = request;
  const object = `arn:aws:s3:::${bucket}/${key}`;
  const kms = ctx.keys.keyOfBucket(bucket);
  const withKey = (action: string): RequestedAction[] =>
    kms ? [{ action, resources: [kms], context: viaService('s3', ctx.region) }] : [];
  const versioned = query.has('versionId');
  if (query.has('uploadId')) {
    if (method === 'DELETE')
      return {
        operation: 'AbortMultipartUpload',
        actions: [{ action: 's3:AbortMultipartUpload', resources: [object] }],
      };
    if (method === 'GET')
      return {
        operation: 'ListParts',
        actions: [{ action: 's3:ListMultipartUploadParts', resources: [object] }],
      };
    const operation = method === 'POST' ? 'CompleteMultipartUpload' : 'UploadPart';
    return {
      operation,
      actions: [{ action: 's3:PutObject', resources: [object] }, ...withKey('kms:GenerateDataKey')],
    };
  }
  if (method === 'POST' && query.has('uploads'))
    return {
      operation: 'CreateMultipartUpload',
      actions: [{ action: 's3:PutObject', resources: [object] }, ...withKey('kms:GenerateDataKey')],
    };
  for (const sub of ['tagging', 'retention', 'legal-hold'] as const) {
    if (!query.has(sub)) continue;
    const name = { tagging: 'ObjectTagging', retention: 'ObjectRetention', 'legal-hold': 'ObjectLegalHold' }[
      sub
    ];
    const verb = method === 'GET' ? 'Get' : method === 'DELETE' ? 'Delete' : 'Put';
    return { operation: `${verb}${name}`, actions: [{ action: `s3:${verb}${name}`, resources: [object] }] };
  }
  if (method === 'GET' || method === 'HEAD')
    return {
      operation: method === 'GET' ? 'GetObject' : 'HeadObject',
      actions: [
        { action: versioned ? 's3:GetObjectVersion' : 's3:GetObject', resources: [object] },
        ...withKey('kms:Decrypt'),
      ],
    };
  if (method === 'PUT') {
    const source = request.headers['x-amz-copy-source'];
    const copied = source
      ? [
          {
            action: 's3:GetObject',
            resources: [`arn:aws:s3:::${decodeURIComponent(source).replace(/^\//, '').split('?')[0]}`],
          },
        ]
      : [];
    return {
      operation: source ? 'CopyObject' : 'PutObject',
      actions: [
        { action: 's3:PutObject', resources: [object] },
        ...copied,
        ...withKey('kms:GenerateDataKey'),
      ],
    };
  }
  if (method === 'DELETE')
    return {
      operation: 'DeleteObject',
      actions: [{ action: versioned ? 's3:DeleteObjectVersion' : 's3:DeleteObject', resources: [object] }],
    };
  throw new UnclassifiedRequest(`S3 ${method} on an object`);
}

function s3Bucket(options: { bucket: string; request: SignedRequest }) {
  const { bucket, request } = options;
  const { method, query } = request;
  const arn = `arn:aws:s3:::${bucket}`;
  if (method === 'POST' && query.has('delete')) {
    const text = request.body.toString('utf8');
    const objects = [...text.matchAll(/<Object>([\s\S]*?)<\/Object>/g)].map((m) => m[1] ?? '');
    const actions = objects.map((o) => ({
      action: /<VersionId>/.test(o) ? 's3:DeleteObjectVersion' : 's3:DeleteObject',
      resources: [`${arn}/${/<Key>([\s\S]*?)<\/Key>/.exec(o)?.[1] ?? ''}`],
    }));
    return { operation: 'DeleteObjects', actions };
  }
  const subresources: Record<string, string> = {
    versions: 's3:ListBucketVersions',
    uploads: 's3:ListBucketMultipartUploads',
    location: 's3:GetBucketLocation',
    versioning: 's3:GetBucketVersioning',
    'object-lock': 's3:GetBucketObjectLockConfiguration',
    encryption: 's3:GetEncryptionConfiguration',
  };
  for (const [sub, action] of Object.entries(subresources)) {
    if (query.has(sub) && (method === 'GET' || method === 'HEAD'))
      return { operation: action.slice(3), actions: [{ action, resources: [arn] }] };
  }
  if (method === 'GET' || method === 'HEAD') {
    const prefix = query.get('prefix');
    return {
      operation: method === 'HEAD' ? 'HeadBucket' : 'ListObjectsV2',
      actions: [
        {
          action: 's3:ListBucket',
          resources: [arn],
          ...(prefix !== null ? { context: { 's3:prefix': prefix } } : {}),
        },
      ],
    };
  }
  throw new UnclassifiedRequest(`S3 ${method} on bucket ${bucket} (${[...query.keys()].join(',')})`);
}

function s3(request: SignedRequest, ctx: ClassifyContext) {
  const [, bucket = '', ...rest] = request.path.split('/');
  const key = rest.map((p) => decodeURIComponent(p)).join('/');
  if (!bucket) throw new UnclassifiedRequest('S3 request with no bucket');
  return key
    ? s3Object({ bucket, key, request, ctx })
    : s3Bucket({ bucket: decodeURIComponent(bucket), request });
}

function jsonBody(request: SignedRequest): Record<string, unknown> {
  try {
    return JSON.parse(request.body.toString('utf8') || '{}') as Record<string, unknown>;
  } catch {
    return {};
  }
}

function queueArnOf(url: string, region: string): string {
  const [account = '', name = ''] = new URL(url).pathname.split('/').filter(Boolean);
  return `arn:aws:sqs:${region}:${account}:${name}`;
}

function sqs(request: SignedRequest, ctx: ClassifyContext) {
  const operation = (request.headers['x-amz-target'] ?? '').replace(/^AmazonSQS\./, '');
  const body = jsonBody(request);
  const arn = typeof body.QueueUrl === 'string' ? queueArnOf(body.QueueUrl, ctx.region) : '*';
  const key = ctx.keys.keyOfQueue(arn);
  const kms = (action: string) =>
    key ? [{ action, resources: [key], context: viaService('sqs', ctx.region) }] : [];
  const implied = /^SendMessage/.test(operation)
    ? kms('kms:GenerateDataKey')
    : operation === 'ReceiveMessage'
      ? kms('kms:Decrypt')
      : [];
  // SendMessageBatch and DeleteMessageBatch are authorized as their single-message actions.
  const action = `sqs:${operation.replace(/Batch$/, '')}`;
  return { operation, actions: [{ action, resources: [arn] }, ...implied] };
}

function jsonTarget(request: SignedRequest, ctx: ClassifyContext, service: string) {
  const operation = (request.headers['x-amz-target'] ?? '').split('.').pop() ?? '';
  if (!operation) throw new UnclassifiedRequest(`${service} request with no X-Amz-Target`);
  const body = jsonBody(request);
  if (service === 'kms') {
    const keyId = String(body.KeyId ?? '');
    const context = kmsRequestContext(operation, body);
    return {
      operation,
      actions: [
        {
          action: `kms:${operation}`,
          resources: keyId ? [ctx.keys.keyArn(keyId)] : ['*'],
          ...(context ? { context } : {}),
        },
      ],
    };
  }
  if (service === 'events') return events(operation, body, ctx);
  // states: StartExecution names its state machine, DescribeExecution its execution; the
  // gateway answers SendTask* itself and names the state machine there.
  const named =
    operation === 'StartExecution'
      ? body.stateMachineArn
      : operation === 'DescribeExecution'
        ? body.executionArn
        : undefined;
  return {
    operation,
    actions: [{ action: `${service}:${operation}`, resources: [typeof named === 'string' ? named : '*'] }],
  };
}

/** EventBridge PutEvents: authorized on each entry's bus (the account's default bus unless named). */
function events(operation: string, body: Record<string, unknown>, ctx: ClassifyContext) {
  if (operation !== 'PutEvents') throw new UnclassifiedRequest(`EventBridge ${operation}`);
  const busArn = (name: unknown) => {
    const bus = typeof name === 'string' && name ? name : 'default';
    return bus.startsWith('arn:') ? bus : `arn:aws:events:${ctx.region}:${ctx.account}:event-bus/${bus}`;
  };
  const entries = Array.isArray(body.Entries) ? (body.Entries as Record<string, unknown>[]) : [];
  const buses = [...new Set(entries.map((e) => busArn(e.EventBusName)))];
  return {
    operation,
    actions: [{ action: 'events:PutEvents', resources: buses.length ? buses : [busArn(undefined)] }],
  };
}

function ec2(request: SignedRequest, ctx: ClassifyContext) {
  const form = new URLSearchParams(request.body.toString('utf8'));
  const operation = form.get('Action') ?? request.query.get('Action') ?? '';
  const { region, account } = ctx;
  const snapshot = (id: string | null) => `arn:aws:ec2:${region}::snapshot/${id ?? '*'}`;
  const volume = (id: string | null) => `arn:aws:ec2:${region}:${account}:volume/${id ?? '*'}`;
  const tags = [...form.entries()]
    .filter(([k]) => /^TagSpecification\.\d+\.Tag\.\d+\.Key$/.test(k))
    .map(([, v]) => v);
  const tagContext = Object.fromEntries(
    [...form.entries()]
      .filter(([k]) => /^TagSpecification\.\d+\.Tag\.\d+\.Key$/.test(k))
      .map(([k, v]) => [`aws:RequestTag/${v}`, form.get(k.replace(/Key$/, 'Value')) ?? '']),
  );
  const tagged = (resource: string): RequestedAction[] =>
    tags.length > 0
      ? [{ action: 'ec2:CreateTags', resources: [resource], context: { 'ec2:CreateAction': operation } }]
      : [];
  switch (operation) {
    case 'CreateSnapshot':
      return {
        operation,
        actions: [
          { action: 'ec2:CreateSnapshot', resources: [volume(form.get('VolumeId'))] },
          {
            action: 'ec2:CreateSnapshot',
            resources: [snapshot(null)],
            context: { ...tagContext, 'aws:TagKeys': tags },
          },
          ...tagged(snapshot(null)),
        ],
      };
    case 'DeleteSnapshot':
      return {
        operation,
        actions: [{ action: 'ec2:DeleteSnapshot', resources: [snapshot(form.get('SnapshotId'))] }],
      };
    case 'CreateVolume':
      return {
        operation,
        actions: [
          {
            action: 'ec2:CreateVolume',
            resources: [volume(null)],
            context: { ...tagContext, 'aws:TagKeys': tags },
          },
          ...(form.get('SnapshotId')
            ? [{ action: 'ec2:CreateVolume', resources: [snapshot(form.get('SnapshotId'))] }]
            : []),
          ...tagged(volume(null)),
        ],
      };
    case 'ModifySnapshotAttribute':
    case 'CopySnapshot':
      return snapshotCopyRequest({ operation, form, ctx, tagged });
    default:
      if (/^Describe/.test(operation))
        return { operation, actions: [{ action: `ec2:${operation}`, resources: ['*'] }] };
      throw new UnclassifiedRequest(`EC2 ${operation}`);
  }
}

function ebs(request: SignedRequest, ctx: ClassifyContext) {
  const parts = request.path.split('/').filter(Boolean);
  const snapshot = (id: string | undefined) => `arn:aws:ec2:${ctx.region}::snapshot/${id ?? '*'}`;
  if (request.method === 'POST' && parts.length === 1)
    return {
      operation: 'StartSnapshot',
      actions: [{ action: 'ebs:StartSnapshot', resources: [snapshot(undefined)] }],
    };
  if (parts[1] === 'completion')
    return {
      operation: 'CompleteSnapshot',
      actions: [{ action: 'ebs:CompleteSnapshot', resources: [snapshot(parts[2])] }],
    };
  const operation =
    parts[2] === 'changedblocks'
      ? 'ListChangedBlocks'
      : parts.length === 3
        ? 'ListSnapshotBlocks'
        : request.method === 'PUT'
          ? 'PutSnapshotBlock'
          : 'GetSnapshotBlock';
  return { operation, actions: [{ action: `ebs:${operation}`, resources: [snapshot(parts[1])] }] };
}

function sts(request: SignedRequest) {
  const form = new URLSearchParams(request.body.toString('utf8'));
  const operation = form.get('Action') ?? request.query.get('Action') ?? '';
  if (operation === 'GetCallerIdentity') return { operation, actions: [] };
  if (operation === 'AssumeRole') {
    // A role's trust policy may ask for the external id (a DR account's snapshot-copy role).
    const externalId = form.get('ExternalId');
    const context = externalId ? { context: { 'sts:ExternalId': externalId } } : {};
    return {
      operation,
      actions: [{ action: 'sts:AssumeRole', resources: [form.get('RoleArn') ?? '*'], ...context }],
    };
  }
  throw new UnclassifiedRequest(`STS ${operation}`);
}

/** The request in IAM's terms; throws UnclassifiedRequest for what the rehearsal does not know. */
export function classify(request: SignedRequest, ctx: ClassifyContext): ClassifiedRequest {
  const { accessKeyId, region, service } = credentialScope(request);
  if (!service) throw new UnclassifiedRequest(`an unsigned ${request.method} ${request.path}`);
  const base = { accessKeyId, service };
  switch (service) {
    case 's3':
      // S3 uses the key in the bucket's region (a DR stack reads its source across regions).
      return { ...base, ...s3(request, { ...ctx, region: region ?? ctx.region }) };
    case 'sqs':
      return { ...base, ...sqs(request, ctx) };
    case 'kms':
    case 'states':
    case 'events':
      return { ...base, ...jsonTarget(request, ctx, service) };
    case 'ec2':
      // EC2 acts in the request's region (a snapshot copy is made in its target region).
      return { ...base, ...ec2(request, { ...ctx, region: region ?? ctx.region }) };
    case 'ebs':
      return { ...base, ...ebs(request, ctx) };
    case 'sts':
      return { ...base, ...sts(request) };
    case 'scheduler': {
      const classified = schedulerRequest(request, ctx);
      if (!classified) throw new UnclassifiedRequest(`a Scheduler ${request.method} ${request.path}`);
      return { ...base, ...classified };
    }
    case 'eks': {
      const name = request.path.split('/').filter(Boolean)[1] ?? '';
      const arn = `arn:aws:eks:${ctx.region}:${ctx.account}:cluster/${name}`;
      return {
        ...base,
        operation: 'DescribeCluster',
        actions: [{ action: 'eks:DescribeCluster', resources: [arn] }],
      };
    }
    default:
      throw new UnclassifiedRequest(`a ${service} request`);
  }
}
