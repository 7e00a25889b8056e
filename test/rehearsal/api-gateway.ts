/**
 * API Gateway, for the rehearsal: the stack's REST API hands each request to the function of its
 * Lambda proxy integration as API Gateway does, as a proxy event (resource `/{proxy+}`, the path
 * without the stage, the query, the body, a request context with the stage and a request id),
 * once the template is seen to allow it: every method authorizes with AWS_IAM (the caller is
 * taken as a SigV4-signed principal), and the function grants apigateway.amazonaws.com invoke.
 * The function's answer (statusCode, headers, body) is what the client gets.
 */
import { randomUUID } from 'node:crypto';
import type { Deployment } from './deploy.js';
import type { LambdaService } from './lambda.js';
import { type Json, resolveString, resourcesOf } from './template.js';

export interface ApiCall {
  readonly method: string;
  /** The path below the stage, with its query: `/backups?phase=Completed`. */
  readonly path: string;
  readonly body?: unknown;
}

export interface ApiAnswer {
  readonly status: number;
  readonly body: unknown;
}

export interface RehearsedApi {
  (call: ApiCall): Promise<ApiAnswer>;
  /** What keeps a request from reaching the function as the template says it would. */
  readonly errors: string[];
}

/** The Api function the template's methods integrate with, checked as API Gateway would need it. */
function integratedFunction(deployment: Deployment, errors: string[]): string {
  const { assembly, resolver } = deployment;
  const methods = resourcesOf(assembly.template, 'AWS::ApiGateway::Method').map(
    ([, r]) => r.Properties ?? {},
  );
  if (methods.length === 0) throw new Error('rehearsal: the stack has no API methods');
  const functions = new Set<string>();
  for (const m of methods) {
    if (m.AuthorizationType !== 'AWS_IAM')
      errors.push(`a ${String(m.HttpMethod)} method is not IAM-authorized`);
    const integration = (m.Integration ?? {}) as Record<string, Json>;
    if (integration.Type !== 'AWS_PROXY') errors.push('a method is not a Lambda proxy integration');
    const uri = resolveString(resolver, integration.Uri ?? null);
    const fn = /functions\/(arn:aws:lambda:[^/]+)\/invocations/.exec(uri)?.[1];
    if (fn) functions.add(fn);
  }
  const [fn, ...others] = [...functions];
  if (!fn || others.length > 0) throw new Error(`rehearsal: the API integrates ${functions.size} functions`);
  const permitted = resourcesOf(assembly.template, 'AWS::Lambda::Permission').some(
    ([, r]) =>
      r.Properties?.Principal === 'apigateway.amazonaws.com' &&
      resolveString(resolver, r.Properties.FunctionName ?? null) === fn,
  );
  if (!permitted) errors.push(`${fn} does not let apigateway.amazonaws.com invoke it`);
  return fn;
}

export function apiGateway(options: { deployment: Deployment; lambda: LambdaService }): RehearsedApi {
  const errors: string[] = [];
  const fn = integratedFunction(options.deployment, errors);
  const call = async (request: ApiCall): Promise<ApiAnswer> => {
    const url = new URL(request.path, 'https://api.rehearsal');
    const query = Object.fromEntries(url.searchParams);
    const event = {
      resource: '/{proxy+}',
      path: url.pathname,
      httpMethod: request.method,
      headers: { 'content-type': 'application/json' },
      multiValueHeaders: { 'content-type': ['application/json'] },
      queryStringParameters: Object.keys(query).length ? query : null,
      multiValueQueryStringParameters: null,
      pathParameters: { proxy: url.pathname.slice(1) },
      stageVariables: null,
      requestContext: {
        requestId: randomUUID(),
        stage: 'v1',
        httpMethod: request.method,
        path: `/v1${url.pathname}`,
        resourcePath: '/{proxy+}',
        identity: { caller: 'rehearsal', userArn: 'arn:aws:iam::123456789012:user/rehearsal' },
      },
      body: request.body === undefined ? null : JSON.stringify(request.body),
      isBase64Encoded: false,
    };
    const result = await options.lambda.invoke(fn, event as unknown as Json);
    if (!result.ok) {
      // API Gateway answers a failed integration 502, with its own body.
      errors.push(
        `${request.method} ${request.path}: ${result.error.errorType}: ${result.error.errorMessage}`,
      );
      return { status: 502, body: { message: 'Internal server error' } };
    }
    const answer = result.value as { statusCode: number; body?: string };
    return {
      status: answer.statusCode,
      body: answer.body ? (JSON.parse(answer.body) as unknown) : undefined,
    };
  };
  return Object.assign(call, { errors });
}
