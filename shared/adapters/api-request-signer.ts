/**
 * SigV4 signing of API Gateway requests (`execute-api`) with the default AWS credential chain:
 * environment, shared config and credentials files (profiles, SSO), container and instance
 * roles. The region is the endpoint's (`<id>.execute-api.<region>.amazonaws.com`), else
 * $AWS_REGION. Loaded only for a deployment's endpoint (the `lifeboat` command's remote verbs).
 */
import { fromNodeProviderChain } from '@aws-sdk/credential-providers';
import { Hash } from '@smithy/hash-node';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import { LifeboatError } from '../domain/errors.js';

export function sigv4Auth(endpoint: URL) {
  const region =
    /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com$/.exec(endpoint.hostname)?.[1] ??
    process.env.AWS_REGION ??
    process.env.AWS_DEFAULT_REGION;
  if (!region)
    throw new LifeboatError(
      `the region of ${endpoint.origin} is unknown: set $AWS_REGION to sign requests to it`,
    );
  const signer = new SignatureV4({
    service: 'execute-api',
    region,
    credentials: fromNodeProviderChain(),
    sha256: Hash.bind(null, 'sha256'),
  });
  return async (request: { method: string; url: URL; headers: Record<string, string>; body?: string }) => {
    const { url } = request;
    const signed = await signer.sign(
      new HttpRequest({
        method: request.method,
        protocol: url.protocol,
        hostname: url.hostname,
        ...(url.port ? { port: Number(url.port) } : {}),
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: { ...request.headers, host: url.host },
        ...(request.body !== undefined ? { body: request.body } : {}),
      }),
    );
    // fetch sets Host itself, to the same value that was signed.
    const { host: _, ...headers } = signed.headers as Record<string, string>;
    return headers;
  };
}
