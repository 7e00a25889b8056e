/**
 * The local server's HTTP side: each request turned into the API Gateway proxy event the API
 * handler takes in AWS (functions/api), and its result written back; requests carry the token
 * the server wrote to its file (`authorization: Bearer …`, compared in constant time), as
 * requests in AWS carry a SigV4 signature. Download links are served without it (the link's own
 * signature is the credential). Bodies are bounded; every answer is JSON, errors included.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiEvent, ApiResult } from '../../functions/api/http.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { DOWNLOADS_PATH, type LocalDownloadLinks } from './local-links.js';

/** API Gateway's own limit on a request's payload. */
const MAX_BODY = 10 * 1024 * 1024;

export interface HttpAdapterOptions {
  readonly token: string;
  readonly handle: (event: ApiEvent) => Promise<ApiResult>;
  readonly links: LocalDownloadLinks;
  readonly store: ObjectStore;
  /** Told of a request that failed in the adapter itself. */
  readonly onError: (error: unknown) => void;
}

function send(response: ServerResponse, result: ApiResult): void {
  response.writeHead(result.statusCode, { ...(result.headers as Record<string, string> | undefined) });
  response.end(result.body);
}

const error = (statusCode: number, code: string, message: string): ApiResult => ({
  statusCode,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ code, message }),
});

function authorized(request: IncomingMessage, token: string): boolean {
  const given = Buffer.from(/^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '');
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

async function bodyOf(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function download(options: {
  url: URL;
  response: ServerResponse;
  adapter: HttpAdapterOptions;
}): Promise<void> {
  const { url, response, adapter } = options;
  const key = adapter.links.verify(url);
  if (!key) return send(response, error(403, 'Forbidden', 'the download link is not valid or has expired'));
  const stream = await adapter.store.getStream(key);
  if (!stream) return send(response, error(404, 'NotFound', 'the object is gone'));
  response.writeHead(200, { 'content-type': 'application/octet-stream' });
  for await (const chunk of stream) response.write(chunk);
  response.end();
}

/** The request listener of the local server. */
export function httpAdapter(
  adapter: HttpAdapterOptions,
): (request: IncomingMessage, response: ServerResponse) => void {
  const serve = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (request.method === 'GET' && url.pathname.startsWith(DOWNLOADS_PATH))
      return download({ url, response, adapter });
    if (!authorized(request, adapter.token))
      return send(
        response,
        error(401, 'Unauthorized', "the request has no valid token: send the one in the server's token file"),
      );
    const body = await bodyOf(request);
    if (body === undefined)
      return send(response, error(413, 'PayloadTooLarge', `the body is over ${MAX_BODY} bytes`));
    const event: ApiEvent = {
      httpMethod: request.method ?? 'GET',
      path: url.pathname,
      queryStringParameters: url.searchParams.size > 0 ? Object.fromEntries(url.searchParams) : null,
      body: body || null,
      isBase64Encoded: false,
      headers: Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)])),
      requestContext: { requestId: randomUUID() },
    };
    send(response, await adapter.handle(event));
  };
  return (request, response) => {
    serve(request, response).catch((failure: unknown) => {
      adapter.onError(failure);
      if (!response.headersSent)
        send(response, error(500, 'InternalError', 'the request failed; the server log says why'));
      else response.end();
    });
  };
}
