/**
 * What the API handlers take and give: API Gateway's proxy event and result (REST API, Lambda
 * proxy integration), and the answers they are made of. Every answer is JSON; every answer that
 * is not 2xx is an ApiError body with a code a program can match, never a stack trace.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { ApiError } from '../../shared/contracts/api.js';
import type { FieldProblem } from '../../shared/domain/errors.js';

/** The parts of API Gateway's proxy event the API reads (the local server builds the same). */
export type ApiEvent = Pick<
  APIGatewayProxyEvent,
  'httpMethod' | 'path' | 'queryStringParameters' | 'body' | 'isBase64Encoded'
> & {
  readonly headers?: APIGatewayProxyEvent['headers'];
  readonly requestContext?: { readonly requestId?: string };
};

export type ApiResult = APIGatewayProxyResult;

const HEADERS = { 'content-type': 'application/json' };

export function json(statusCode: number, body: unknown): ApiResult {
  return { statusCode, headers: HEADERS, body: JSON.stringify(body) };
}

export function failure(options: {
  readonly status: number;
  readonly code: string;
  readonly message: string;
  readonly problems?: readonly FieldProblem[];
}): ApiResult {
  const body: ApiError = {
    code: options.code,
    message: options.message,
    ...(options.problems ? { problems: options.problems } : {}),
  };
  return json(options.status, body);
}

export const notFound = (what: string): ApiResult =>
  failure({ status: 404, code: 'NotFound', message: `${what} not found` });

export const conflict = (code: string, message: string): ApiResult => failure({ status: 409, code, message });

export function invalid(problems: readonly FieldProblem[]): ApiResult {
  return failure({
    status: 400,
    code: 'FailedValidation',
    message: `invalid request: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`,
    problems,
  });
}

/** The request's body as JSON; a body that is not JSON is a FailedValidation of `(body)`. */
export function bodyOf(event: ApiEvent): { ok: true; value: unknown } | { ok: false; result: ApiResult } {
  const text = event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64').toString('utf8') : event.body;
  if (!text) return { ok: false, result: invalid([{ path: '(body)', message: 'a JSON body is required' }]) };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, result: invalid([{ path: '(body)', message: 'is not JSON' }]) };
  }
}
