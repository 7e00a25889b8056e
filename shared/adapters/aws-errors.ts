/**
 * What a failed AWS SDK call becomes, for every adapter over an AWS service: an answer that means
 * "later" (the service's throttling or capacity codes, 429, 5xx, a server fault) is a
 * RetryableError; any other answer of the service is CloudRequestRefused with its code; no answer
 * at all (connection reset, timeout) is the network, so retryable too; an abort or a bug is passed
 * on unchanged. Messages carry the service's own message, never a request's payload.
 */
import { CloudRequestRefused, RetryableError } from '../domain/errors.js';

/** Node and SDK names for a request that never got (all of) its answer. */
const NETWORK_ERRORS: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'TimeoutError',
  'RequestTimeout',
  'NetworkingError',
  'ERR_STREAM_PREMATURE_CLOSE',
]);

/** The fields every AWS SDK v3 service exception carries. */
interface ServiceError extends Error {
  readonly $metadata: { readonly httpStatusCode?: number };
  readonly $retryable?: unknown;
  readonly $fault?: 'client' | 'server';
}

export function awsErrorOf(
  error: unknown,
  options: {
    /** The call, for the message: e.g. `CreateSnapshot of vol-1`. */
    what: string;
    signal?: AbortSignal | undefined;
    /** The service's exception base class (e.g. EC2ServiceException). */
    service: abstract new (
      ...args: never[]
    ) => Error;
    /** The service's error codes that mean "later". */
    retryableCodes: ReadonlySet<string>;
    /** Extra words after the code, e.g. the EBS direct APIs' `Reason`. */
    detail?: (error: Error) => string | undefined;
  },
): unknown {
  const { what, signal } = options;
  if (signal?.aborted || (error instanceof Error && error.name === 'AbortError')) return error;
  if (error instanceof RetryableError || error instanceof CloudRequestRefused) return error;
  if (error instanceof options.service) {
    const answer = error as ServiceError;
    const status = answer.$metadata?.httpStatusCode ?? 0;
    const detail = options.detail?.(answer);
    const message = `${what}: ${answer.name}${detail ? ` (${detail})` : ''}: ${answer.message}`;
    if (
      options.retryableCodes.has(answer.name) ||
      answer.$retryable ||
      answer.$fault === 'server' ||
      status === 429 ||
      status >= 500
    ) {
      return new RetryableError(message, { cause: error });
    }
    return new CloudRequestRefused(message, { code: answer.name, cause: error });
  }
  const code = (error as { code?: unknown } | null)?.code;
  const network =
    NETWORK_ERRORS.has((error as Error | null)?.name ?? '') ||
    (typeof code === 'string' && NETWORK_ERRORS.has(code));
  return network ? new RetryableError(`${what}: ${(error as Error).message}`, { cause: error }) : error;
}
