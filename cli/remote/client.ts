/**
 * The API of a deployment as the `lifeboat` command calls it: the endpoint from `--endpoint`,
 * $LIFEBOAT_ENDPOINT or the config file (`lifeboat config set endpoint URL`); requests to a
 * loopback endpoint (`lifeboat server --local`) carry the token from its file, any other is signed
 * with SigV4 for API Gateway (execute-api) with the default AWS credential chain (profiles, SSO,
 * environment), the signer loaded only then. Throttled and unavailable answers are tried again
 * with backoff; an error answer becomes an ApiFailure with the API's code, message and field
 * problems.
 */
import { readFile } from 'node:fs/promises';
import type { ApiError } from '../../shared/contracts/api.js';
import { checkedEndpoint, configFile, readConfig, tokenFile } from '../config.js';
import { UsageError } from '../flags.js';

/** The API answered with an error: its status and body. */
export class ApiFailure extends Error {
  override name = 'ApiFailure';
  constructor(
    readonly status: number,
    readonly body: ApiError,
  ) {
    super(body.message);
  }
}

export interface Api {
  readonly endpoint: string;
  call<T>(options: {
    method: string;
    path: string;
    query?: Record<string, string>;
    body?: unknown;
  }): Promise<T>;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** The endpoint a command uses, and where it came from (for messages). */
export async function endpointOf(flag: string | undefined): Promise<string> {
  if (flag) return checkedEndpoint(flag, '--endpoint');
  if (process.env.LIFEBOAT_ENDPOINT)
    return checkedEndpoint(process.env.LIFEBOAT_ENDPOINT, '$LIFEBOAT_ENDPOINT');
  const configured = (await readConfig()).endpoint;
  if (configured) return checkedEndpoint(configured, `endpoint in ${configFile()}`);
  throw new UsageError(
    'no Lifeboat API to talk to: give --endpoint URL, set $LIFEBOAT_ENDPOINT, or run lifeboat config set endpoint URL (or add --local to work here)',
  );
}

type Authorize = (request: {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string;
}) => Promise<Record<string, string>>;

async function tokenAuth(): Promise<Authorize> {
  const file = tokenFile();
  const token = (
    await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new UsageError(
        `the local server's token file ${file}: ${error.code === 'ENOENT' ? 'does not exist (is lifeboat server running? set $LIFEBOAT_TOKEN_FILE to the file it wrote)' : (error.code ?? error.message)}`,
      );
    })
  ).trim();
  return async ({ headers }) => ({ ...headers, authorization: `Bearer ${token}` });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function apiClient(flag: string | undefined): Promise<Api> {
  const endpoint = await endpointOf(flag);
  const url = new URL(endpoint);
  const authorize: Authorize = LOOPBACK.has(url.hostname)
    ? await tokenAuth()
    : (await import('../../shared/adapters/api-request-signer.js')).sigv4Auth(url);
  return {
    endpoint,
    call: async <T>(options: {
      method: string;
      path: string;
      query?: Record<string, string>;
      body?: unknown;
    }) => {
      const target = new URL(`${endpoint}${options.path}`);
      for (const [k, v] of Object.entries(options.query ?? {})) target.searchParams.set(k, v);
      const body = options.body === undefined ? undefined : JSON.stringify(options.body);
      const headers = { accept: 'application/json', ...(body ? { 'content-type': 'application/json' } : {}) };
      for (let attempt = 1; ; attempt++) {
        const signed = await authorize({
          method: options.method,
          url: target,
          headers,
          ...(body ? { body } : {}),
        });
        const response = await fetch(target, {
          method: options.method,
          headers: signed,
          ...(body ? { body } : {}),
        }).catch((error: Error) => {
          throw new UsageError(
            `the Lifeboat API at ${endpoint} does not answer: ${(error.cause as Error | undefined)?.message ?? error.message}`,
          );
        });
        const text = await response.text();
        if ((response.status === 429 || response.status === 503) && attempt < 6) {
          await sleep(Math.min(8000, 250 * 2 ** attempt) * Math.random());
          continue;
        }
        const parsed = text ? (JSON.parse(text) as unknown) : undefined;
        if (!response.ok) throw new ApiFailure(response.status, errorBody(response.status, parsed));
        return parsed as T;
      }
    },
  };
}

/** The API's error body, or API Gateway's own (`{"message": …}`) made into one. */
function errorBody(status: number, parsed: unknown): ApiError {
  const body = (parsed ?? {}) as Partial<ApiError> & { message?: string };
  return {
    code: body.code ?? (status === 403 ? 'AccessDenied' : `HTTP${status}`),
    message: body.message ?? `the API answered ${status}`,
    ...(body.problems ? { problems: body.problems } : {}),
  };
}
