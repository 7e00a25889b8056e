/**
 * The endpoint every deployed function, task and poller of the rehearsal talks to
 * (AWS_ENDPOINT_URL): each request is classified (aws-requests.ts), evaluated against its
 * caller's role (iam.ts) and metered, then forwarded to moto. A refused call is answered with
 * AWS's AccessDenied, as the service would. Two services moto cannot play here are answered by
 * the rehearsal itself: EKS DescribeCluster names the local cluster, and Step Functions'
 * SendTask{Success,Failure,Heartbeat} reach the running state machines, and StartExecution and
 * DescribeExecution (the API's) start and describe them (state-machines.ts).
 * Requests signed by keys the rehearsal did not hand out (the test's own) pass unmetered.
 */
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { DescribeSnapshotsCommand, EC2Client } from '@aws-sdk/client-ec2';
import { AssumedRoles } from './assumed-roles.js';
import {
  type ClassifiedRequest,
  classify,
  type EncryptionKeys,
  type SignedRequest,
  UnclassifiedRequest,
} from './aws-requests.js';
import type { Deployment, KeyHolder } from './deploy.js';
import type { IamPolicies } from './iam.js';
import type { Meter } from './meter.js';

export interface ClusterEndpoint {
  readonly endpoint: string;
  /** The cluster CA, PEM. */
  readonly ca: string;
}

export interface TaskCallbacks {
  /** The state machine ARN a task token belongs to, if it was ever handed out. */
  stateMachineOf(token: string): string | undefined;
  /** Whether a task still waits for that token (a settled one answers TaskTimedOut, as AWS does). */
  isWaiting(token: string): boolean;
  settle(options: { operation: string; body: Record<string, unknown> }): void;
}

/** Step Functions' execution API, as the rehearsal's state machines answer it. */
export interface ExecutionApi {
  /** StartExecution's answer, or an error of Step Functions' (ExecutionAlreadyExists, …). */
  start(body: Record<string, unknown>): { executionArn: string; startDate: number };
  /** DescribeExecution's answer; undefined when there is no such execution. */
  describe(executionArn: string): Record<string, unknown> | undefined;
}

/** What the gateway evaluates and emulates with, once the stack is deployed. */
export interface GatewayOptions {
  readonly deployment: Deployment;
  readonly iam: IamPolicies;
  readonly meter: Meter;
  readonly keys: EncryptionKeys;
  readonly clusters: ReadonlyMap<string, ClusterEndpoint>;
  readonly callbacks: TaskCallbacks;
  readonly executions: ExecutionApi;
}

/** A failure the test environment injects into matching calls, after they were authorized. */
export interface Fault {
  /** The caller (function, task, …) whose calls fail. */
  readonly caller: RegExp;
  readonly operation: string;
  /** Only requests whose path matches. */
  readonly path?: RegExp;
  readonly status: number;
  readonly code: string;
}

const JSON_SERVICES = new Set(['sqs', 'kms', 'states', 'events']);
const REST_JSON_SERVICES = new Set(['eks', 'ebs']);

/** An error answer in the service's protocol (AccessDenied unless told). */
function fail(
  response: ServerResponse,
  options: { service: string; message: string; status?: number; code?: string },
): void {
  const { service, message } = options;
  const code = options.code ?? 'AccessDenied';
  const type = code === 'AccessDenied' ? 'AccessDeniedException' : code;
  if (JSON_SERVICES.has(service)) {
    response.writeHead(options.status ?? 400, { 'content-type': 'application/x-amz-json-1.0' });
    response.end(JSON.stringify({ __type: type, message }));
  } else if (REST_JSON_SERVICES.has(service)) {
    response.writeHead(options.status ?? 403, {
      'content-type': 'application/json',
      'x-amzn-errortype': type,
    });
    response.end(JSON.stringify({ message }));
  } else {
    response.writeHead(options.status ?? 403, { 'content-type': 'text/xml' });
    const xml = `<Code>${code}</Code><Message>${message.replace(/[<&]/g, ' ')}</Message>`;
    response.end(`<?xml version="1.0" encoding="UTF-8"?><Error>${xml}</Error>`);
  }
}

const deny = fail;

async function bodyOf(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export class AwsGateway {
  private server: Server | undefined;
  private attached: GatewayOptions | undefined;
  private readonly faults = new Set<Fault>();
  /** Keys of roles the deployment's callers assumed through the gateway (another account's). */
  private readonly assumed = new AssumedRoles();
  /** Requests the rehearsal could not classify: each fails the run. */
  readonly unclassified: string[] = [];

  /** Until `attach`, every request goes to moto as it is (the deploy's own calls). */
  constructor(private readonly motoEndpoint: string) {}

  attach(options: GatewayOptions): void {
    this.attached = options;
  }

  /** Makes matching calls fail until the returned function is called. */
  inject(fault: Fault): () => void {
    this.faults.add(fault);
    return () => this.faults.delete(fault);
  }

  private get options(): GatewayOptions {
    if (!this.attached)
      throw new Error('rehearsal: the gateway evaluates nothing before the stack is deployed');
    return this.attached;
  }

  async start(): Promise<string> {
    this.server = createServer((request, response) => {
      this.handle(request, response).catch((error: Error) => {
        if (!response.headersSent) response.writeHead(500);
        response.end(String(error.message));
      });
    });
    await new Promise<void>((done) => this.server?.listen(0, '127.0.0.1', done));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((done) => (this.server ? this.server.close(() => done()) : done()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await bodyOf(request);
    if (!this.attached) return this.forward({ request, response, body });
    const url = new URL(request.url ?? '/', 'http://gateway');
    const signed: SignedRequest = {
      method: request.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      headers: request.headers as Record<string, string | undefined>,
      body,
    };
    const { deployment } = this.options;
    let classified: ClassifiedRequest;
    try {
      classified = classify(signed, {
        region: deployment.target.region,
        account: deployment.target.account,
        keys: this.options.keys,
      });
    } catch (error) {
      if (!(error instanceof UnclassifiedRequest)) throw error;
      const holder = this.holder(signed);
      if (holder) {
        this.unclassified.push(`${holder.caller}: ${error.message}`);
        deny(response, { service: 'unknown', message: `the rehearsal cannot evaluate ${error.message}` });
        return;
      }
      return this.forward({ request, response, body });
    }
    const holder = classified.accessKeyId ? this.holderOf(classified.accessKeyId) : undefined;
    if (holder && !(await this.authorized({ classified, holder, body, response }))) return;
    if (holder)
      this.options.meter.request({
        caller: holder.caller,
        service: classified.service,
        operation: classified.operation,
      });
    const fault =
      holder &&
      [...this.faults].find(
        (f) =>
          f.caller.test(holder.caller) &&
          f.operation === classified.operation &&
          (!f.path || f.path.test(signed.path)),
      );
    if (fault)
      return fail(response, {
        service: classified.service,
        message: 'injected by the rehearsal',
        status: fault.status,
        code: fault.code,
      });
    if (classified.service === 'eks') return this.describeCluster(signed, response);
    if (classified.service === 'states' && !classified.operation.startsWith('SendTask'))
      return this.execution({ classified, body, response });
    if (classified.service === 'states') return this.taskCallback({ classified, body, response });
    if (holder && classified.operation === 'AssumeRole') {
      const roleArn = new URLSearchParams(body.toString('utf8')).get('RoleArn') ?? '';
      const answer = (text: string) => this.assumed.record({ by: holder, roleArn, answer: text });
      return this.forward({ request, response, body, answer });
    }
    return this.forward({ request, response, body });
  }

  /** Who holds a key: a caller the deployment handed it to, or one that assumed a role with it. */
  private holderOf(accessKeyId: string): KeyHolder | undefined {
    return this.options.deployment.holderOf(accessKeyId) ?? this.assumed.holderOf(accessKeyId);
  }

  private holder(signed: SignedRequest): KeyHolder | undefined {
    const credential = /Credential=([^/,\s]+)/.exec(signed.headers.authorization ?? '')?.[1];
    return credential ? this.holderOf(credential) : undefined;
  }

  /** Evaluates every action of the call; answers AccessDenied and returns false when one is refused. */
  private async authorized(options: {
    classified: ClassifiedRequest;
    holder: KeyHolder;
    body: Buffer;
    response: ServerResponse;
  }): Promise<boolean> {
    const { classified, holder, response } = options;
    for (const requested of this.actionsOf(classified, options.body)) {
      const context = { ...(await this.resourceTags(requested)), ...requested.context };
      const decision = await this.options.iam.evaluate({
        principal: holder.roleArn,
        caller: holder.caller,
        action: requested.action,
        resources: requested.resources,
        ...(Object.keys(context).length ? { context } : {}),
      });
      if (!decision.allowed) {
        // S3 gives a cross-account request's refusal no context (AWS: "Access Denied" only).
        const bare =
          classified.service === 's3' && requested.resources.some((r) => this.options.iam.isForeign(r));
        deny(response, {
          service: classified.service,
          message: bare ? 'Access Denied' : `User: ${holder.roleArn} is not authorized: ${decision.detail}`,
        });
        return false;
      }
    }
    return true;
  }

  /**
   * The `aws:ResourceTag/…` keys IAM evaluates an action on an existing resource with: for
   * ec2:DeleteSnapshot and ec2:ModifySnapshotAttribute, the snapshot's tags, read from moto (in
   * the snapshot's region) as AWS reads them.
   */
  private async resourceTags(requested: { action: string; resources: readonly string[] }) {
    const arn = /^arn:aws:ec2:([^:]*)::snapshot\/(snap-[0-9a-f]+)$/.exec(requested.resources[0] ?? '');
    const id = arn?.[2];
    if (!/^ec2:(DeleteSnapshot|ModifySnapshotAttribute)$/.test(requested.action) || !id) return {};
    const ec2 = new EC2Client({
      endpoint: this.motoEndpoint,
      region: arn?.[1] || this.options.deployment.target.region,
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    });
    const found = await ec2
      .send(new DescribeSnapshotsCommand({ SnapshotIds: [id] }))
      .catch(() => ({ Snapshots: [] }));
    const tags = found.Snapshots?.[0]?.Tags ?? [];
    return Object.fromEntries(tags.map((t) => [`aws:ResourceTag/${t.Key}`, t.Value ?? '']));
  }

  /** A task callback is authorized against the state machine its token belongs to. */
  private actionsOf(classified: ClassifiedRequest, body: Buffer) {
    if (classified.service !== 'states' || !classified.operation.startsWith('SendTask'))
      return classified.actions;
    const token = String(
      (JSON.parse(body.toString('utf8') || '{}') as { taskToken?: string }).taskToken ?? '',
    );
    const machine = this.options.callbacks.stateMachineOf(token) ?? '*';
    return classified.actions.map((a) => ({ ...a, resources: [machine] }));
  }

  private describeCluster(signed: SignedRequest, response: ServerResponse): void {
    const name = decodeURIComponent(signed.path.split('/').filter(Boolean)[1] ?? '');
    const cluster = this.options.clusters.get(name);
    if (!cluster) {
      response.writeHead(404, {
        'content-type': 'application/json',
        'x-amzn-errortype': 'ResourceNotFoundException',
      });
      response.end(JSON.stringify({ message: `No cluster found for name: ${name}.` }));
      return;
    }
    const { account, region } = this.options.deployment.target;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        cluster: {
          name,
          arn: `arn:aws:eks:${region}:${account}:cluster/${name}`,
          endpoint: cluster.endpoint,
          status: 'ACTIVE',
          version: '1.34',
          certificateAuthority: { data: Buffer.from(cluster.ca).toString('base64') },
          accessConfig: { authenticationMode: 'API' },
        },
      }),
    );
  }

  /** StartExecution and DescribeExecution, answered by the rehearsal's state machines. */
  private execution(options: {
    classified: ClassifiedRequest;
    body: Buffer;
    response: ServerResponse;
  }): void {
    const { classified, response } = options;
    const body = JSON.parse(options.body.toString('utf8') || '{}') as Record<string, unknown>;
    const answer = (status: number, value: unknown) => {
      response.writeHead(status, { 'content-type': 'application/x-amz-json-1.0' });
      response.end(JSON.stringify(value));
    };
    try {
      if (classified.operation === 'StartExecution') answer(200, this.options.executions.start(body));
      else if (classified.operation === 'DescribeExecution') {
        const found = this.options.executions.describe(String(body.executionArn ?? ''));
        if (found) answer(200, found);
        else
          answer(400, {
            __type: 'ExecutionDoesNotExist',
            message: `Execution Does Not Exist: '${body.executionArn}'`,
          });
      } else {
        this.unclassified.push(`Step Functions ${classified.operation}`);
        answer(400, {
          __type: 'AccessDeniedException',
          message: `the rehearsal does not play ${classified.operation}`,
        });
      }
    } catch (error) {
      const { name, message } = error as Error;
      answer(400, { __type: name, message });
    }
  }

  private taskCallback(options: {
    classified: ClassifiedRequest;
    body: Buffer;
    response: ServerResponse;
  }): void {
    const { classified, body, response } = options;
    const parsed = JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>;
    const token = String(parsed.taskToken ?? '');
    if (!this.options.callbacks.isWaiting(token)) {
      response.writeHead(400, { 'content-type': 'application/x-amz-json-1.0' });
      response.end(JSON.stringify({ __type: 'TaskTimedOut', message: 'Task Timed Out' }));
      return;
    }
    this.options.callbacks.settle({ operation: classified.operation, body: parsed });
    response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
    response.end('{}');
  }

  private forward(options: {
    request: IncomingMessage;
    response: ServerResponse;
    body: Buffer;
    /** Given moto's answer, when it was a success (the credentials of an AssumeRole). */
    answer?: (text: string) => void;
  }): Promise<void> {
    const { request, response, body } = options;
    const target = new URL(this.motoEndpoint);
    return new Promise((done, fail) => {
      const upstream = httpRequest(
        {
          hostname: target.hostname,
          port: target.port,
          method: request.method,
          path: request.url,
          // The Host stays the gateway's: moto writes it into the queue URLs it returns, which
          // the SQS client then calls.
          headers: request.headers,
        },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          const seen: Buffer[] = [];
          if (options.answer && answer.statusCode === 200) answer.on('data', (c: Buffer) => seen.push(c));
          answer.on('end', () => options.answer?.(Buffer.concat(seen).toString('utf8')));
          answer.pipe(response);
          answer.on('end', () => done());
          answer.on('error', fail);
        },
      );
      upstream.on('error', fail);
      upstream.end(body);
    });
  }
}
