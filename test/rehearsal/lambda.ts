/**
 * Lambda, for the rehearsal: each function of the template runs from the bundle CDK built for it
 * (its asset in the cloud assembly), in child processes kept warm between invocations, with the
 * handler the template names, exactly the environment variables the template gives it plus what
 * the Lambda runtime adds (region, function name, memory, log group, the role's temporary
 * credentials) and AWS_ENDPOINT_URL pointing at the rehearsal's gateway. An invocation past the
 * function's timeout is killed and reported as Lambda reports it. After each invocation the
 * platform's own writes (the function's log group; X-Ray segments when tracing is active) are
 * checked against the function's role, as Lambda performs them with it.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Deployment } from './deploy.js';
import type { IamPolicies } from './iam.js';
import type { Meter } from './meter.js';
import { type Json, resolve, resolveString, resourcesOf } from './template.js';

const RUNNER = join(dirname(fileURLToPath(import.meta.url)), 'lambda-runner.mjs');
/** Warm sandboxes per function at most; more invocations wait (two cores run them all). */
const MAX_CONCURRENCY = 4;

export interface LambdaFunction {
  readonly logicalId: string;
  readonly name: string;
  readonly arn: string;
  readonly handler: string;
  readonly codeDir: string;
  readonly environment: Readonly<Record<string, string>>;
  readonly timeoutSeconds: number;
  readonly memoryMb: number;
  readonly roleArn: string;
  readonly logGroupArn?: string;
  readonly tracing: boolean;
}

export type InvocationResult =
  | { readonly ok: true; readonly value: Json }
  | { readonly ok: false; readonly error: { readonly errorType: string; readonly errorMessage: string } };

/** The template's functions with their code, configuration and environment resolved. */
export function functionsOf(deployment: Deployment): LambdaFunction[] {
  const { assembly, resolver } = deployment;
  return resourcesOf(assembly.template, 'AWS::Lambda::Function').map(([id, r]) => {
    const p = r.Properties ?? {};
    const code = p.Code as { S3Key?: string };
    const hash = String(code.S3Key ?? '').replace(/\.zip$/, '');
    const asset = assembly.assets.files[hash];
    if (!asset) throw new Error(`rehearsal: function ${id} has no code asset ${hash}`);
    const env = ((p.Environment as { Variables?: Record<string, Json> } | undefined)?.Variables ??
      {}) as Record<string, Json>;
    const physical = resolver.physical.get(id);
    const logGroup = (p.LoggingConfig as { LogGroup?: Json } | undefined)?.LogGroup;
    const logGroupName = logGroup ? resolveString(resolver, logGroup) : undefined;
    const logGroupArn = [...resolver.physical.values()].find((g) => g.ref === logGroupName)?.attributes.Arn;
    return {
      logicalId: id,
      name: physical?.ref ?? id,
      arn: physical?.attributes.Arn ?? '',
      handler: String(p.Handler),
      codeDir: join(assembly.dir, asset.source.path),
      environment: resolve(resolver, env) as Record<string, string>,
      timeoutSeconds: Number(p.Timeout ?? 3),
      memoryMb: Number(p.MemorySize ?? 128),
      roleArn: resolveString(resolver, p.Role ?? null),
      ...(logGroupArn ? { logGroupArn } : {}),
      tracing: (p.TracingConfig as { Mode?: string } | undefined)?.Mode === 'Active',
    };
  });
}

interface Sandbox {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
}

export class LambdaService {
  private readonly idle = new Map<string, Sandbox[]>();
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();
  private readonly all = new Set<ChildProcess>();
  readonly functions: ReadonlyMap<string, LambdaFunction>;

  constructor(
    private readonly options: {
      deployment: Deployment;
      gateway: string;
      iam: IamPolicies;
      meter: Meter;
      /** Variables the machine needs that Lambda's own runtime would not (see rehearsal.ts). */
      hostEnvironment?: Readonly<Record<string, string>>;
    },
  ) {
    const functions = functionsOf(options.deployment);
    this.functions = new Map(functions.flatMap((f) => [[f.arn, f] as const, [f.name, f] as const]));
  }

  /** A function by its ARN (with or without a version or alias) or name. */
  functionNamed(nameOrArn: string): LambdaFunction {
    const key = nameOrArn.replace(/^(arn:aws:lambda:[^:]+:\d+:function:[^:]+):.*$/, '$1');
    const found = this.functions.get(key);
    if (!found) throw new Error(`rehearsal: no function ${nameOrArn} in the template`);
    return found;
  }

  async invoke(nameOrArn: string, event: Json): Promise<InvocationResult> {
    const fn = this.functionNamed(nameOrArn);
    await this.slot(fn.name);
    const started = Date.now();
    let sandbox: Sandbox | undefined;
    try {
      sandbox = this.idle.get(fn.name)?.pop() ?? (await this.sandbox(fn));
      await sandbox.ready.catch((error: unknown) => {
        sandbox?.child.kill('SIGKILL');
        throw error;
      });
      const result = await this.run({ fn, sandbox, event });
      if (result.ok || result.error.errorType !== 'Sandbox.Timedout')
        this.idle.set(fn.name, [...(this.idle.get(fn.name) ?? []), sandbox]);
      return result;
    } catch (error) {
      const failure = error as { errorType?: string; errorMessage?: string };
      return {
        ok: false,
        error: {
          errorType: failure.errorType ?? 'Runtime.Unknown',
          errorMessage: String(failure.errorMessage ?? error),
        },
      };
    } finally {
      this.options.meter.invocation({
        functionName: fn.name,
        memoryMb: fn.memoryMb,
        durationMs: Date.now() - started,
      });
      await this.platformWrites(fn);
      this.release(fn.name);
    }
  }

  async stop(): Promise<void> {
    for (const child of this.all) child.kill('SIGKILL');
    this.all.clear();
  }

  private async slot(name: string): Promise<void> {
    if ((this.running.get(name) ?? 0) >= MAX_CONCURRENCY)
      await new Promise<void>((go) => this.waiting.set(name, [...(this.waiting.get(name) ?? []), go]));
    this.running.set(name, (this.running.get(name) ?? 0) + 1);
  }

  private release(name: string): void {
    this.running.set(name, (this.running.get(name) ?? 1) - 1);
    this.waiting.get(name)?.shift()?.();
  }

  private async environmentOf(fn: LambdaFunction): Promise<NodeJS.ProcessEnv> {
    const credentials = await this.options.deployment.assume({ roleArn: fn.roleArn, caller: fn.name });
    const { region } = this.options.deployment.target;
    return {
      ...fn.environment,
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      TZ: ':UTC',
      LANG: 'en_US.UTF-8',
      _HANDLER: fn.handler,
      LAMBDA_TASK_ROOT: fn.codeDir,
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
      AWS_REGION: region,
      AWS_DEFAULT_REGION: region,
      AWS_LAMBDA_FUNCTION_NAME: fn.name,
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memoryMb),
      AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.name}`,
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      AWS_SESSION_TOKEN: credentials.sessionToken,
      AWS_ENDPOINT_URL: this.options.gateway,
      ...this.options.hostEnvironment,
    };
  }

  private async sandbox(fn: LambdaFunction): Promise<Sandbox> {
    const child = fork(RUNNER, [], {
      env: await this.environmentOf(fn),
      execArgv: [`--max-old-space-size=${Math.floor(fn.memoryMb * 0.9)}`],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    this.all.add(child);
    child.once('exit', () => this.all.delete(child));
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-4000);
    });
    const ready = new Promise<void>((done, fail) => {
      child.once('message', (message: { type: string; error?: unknown }) => {
        if (message.type === 'ready') done();
        else fail(message.error);
      });
      child.once('exit', (code) =>
        fail({ errorType: 'Runtime.ExitError', errorMessage: `exited ${code}: ${stderr}` }),
      );
    });
    return { child, ready };
  }

  private run(options: { fn: LambdaFunction; sandbox: Sandbox; event: Json }): Promise<InvocationResult> {
    const { fn, sandbox, event } = options;
    const id = randomUUID();
    const deadline = Date.now() + fn.timeoutSeconds * 1000;
    const context = {
      functionName: fn.name,
      functionVersion: '$LATEST',
      invokedFunctionArn: fn.arn,
      memoryLimitInMB: String(fn.memoryMb),
      awsRequestId: id,
      logGroupName: `/aws/lambda/${fn.name}`,
      logStreamName: `rehearsal/[$LATEST]${id.replace(/-/g, '')}`,
    };
    return new Promise((done) => {
      const timer = setTimeout(() => {
        sandbox.child.off('message', onMessage);
        sandbox.child.kill('SIGKILL');
        done({
          ok: false,
          error: {
            errorType: 'Sandbox.Timedout',
            errorMessage: `Task timed out after ${fn.timeoutSeconds.toFixed(2)} seconds`,
          },
        });
      }, fn.timeoutSeconds * 1000);
      const onMessage = (message: { type: string; id: string } & InvocationResult) => {
        if (message.type !== 'result' || message.id !== id) return;
        clearTimeout(timer);
        sandbox.child.off('message', onMessage);
        done(message.ok ? { ok: true, value: message.value } : { ok: false, error: message.error });
      };
      sandbox.child.on('message', onMessage);
      sandbox.child.send({ type: 'invoke', id, event, deadline, context });
    });
  }

  /** The writes Lambda makes with the function's role: its log stream and, traced, X-Ray. */
  private async platformWrites(fn: LambdaFunction): Promise<void> {
    const caller = `Lambda runtime (${fn.name})`;
    if (fn.logGroupArn) {
      const stream = fn.logGroupArn.replace(/:\*$/, ':log-stream:rehearsal');
      for (const action of ['logs:CreateLogStream', 'logs:PutLogEvents'])
        await this.options.iam.evaluate({ principal: fn.roleArn, caller, action, resources: [stream] });
    }
    if (fn.tracing)
      for (const action of ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'])
        await this.options.iam.evaluate({ principal: fn.roleArn, caller, action, resources: ['*'] });
  }
}
