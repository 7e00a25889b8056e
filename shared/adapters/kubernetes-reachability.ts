/**
 * Whether a Kubernetes API server answers, asked for a few seconds at most: why it did not, in
 * words a person can act on, and whether asking again soon may help (a refused or dropped
 * connection or a 5xx may pass; an untrusted certificate or refused credentials will not).
 * Sends only through the request it is given.
 */
import { ClusterUnreachable } from './errors.js';

/** How long `probeServer` keeps asking, how long one request may take, and the waits between. */
const PROBE_WITHIN_MS = 6_000;
const PROBE_REQUEST_TIMEOUT_MS = 5_000;
const PROBE_DELAYS_MS = [250, 750, 1500, 3000];

/** Connection failures that a server starting or a network blip would cause. */
const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
  'EPIPE',
  'ECONNABORTED',
]);

/** What a request to the server ended with: an answer, or the error it failed with. */
export type ServerAnswer = { readonly status: number; readonly body: string } | { readonly error: unknown };

export interface Unanswered {
  readonly reason: string;
  readonly transient: boolean;
}

function errorReason(error: unknown): Unanswered {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (code && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|ERR_SSL/.test(code))
    return {
      reason: `its TLS certificate is not trusted (${code}): check the kubeconfig's certificate-authority`,
      transient: false,
    };
  return { reason: message, transient: code === undefined || TRANSIENT_CODES.has(code) };
}

/** Undefined when the server answered as it should; otherwise why not, and if retrying may help. */
export function unanswered(answer: ServerAnswer): Unanswered | undefined {
  if ('error' in answer) return errorReason(answer.error);
  const { status } = answer;
  if (status >= 200 && status < 300) return undefined;
  if (status === 401 || status === 403)
    return { reason: `it refused the kubeconfig's credentials (HTTP ${status})`, transient: false };
  if (status === 429 || status >= 500) return { reason: `it answered HTTP ${status}`, transient: true };
  return { reason: `it answered HTTP ${status}: is this a Kubernetes API server?`, transient: false };
}

/**
 * Asks until the server answers 2xx (its body returned) or the time is up, retrying only what
 * may pass; then a ClusterUnreachable names the server, the context and why.
 */
export async function probeServer(options: {
  readonly server: string;
  readonly context: string;
  readonly ask: (timeoutMs: number) => Promise<ServerAnswer>;
  readonly withinMs?: number;
}): Promise<string> {
  const deadline = Date.now() + (options.withinMs ?? PROBE_WITHIN_MS);
  for (let attempt = 0; ; attempt++) {
    const answer = await options.ask(
      Math.max(1_000, Math.min(PROBE_REQUEST_TIMEOUT_MS, deadline - Date.now())),
    );
    const problem = unanswered(answer);
    if (!problem && 'body' in answer) return answer.body;
    const delay = PROBE_DELAYS_MS[Math.min(attempt, PROBE_DELAYS_MS.length - 1)] ?? 1_000;
    if (problem && (!problem.transient || Date.now() + delay >= deadline))
      throw new ClusterUnreachable(
        options.server,
        `cannot reach the Kubernetes API server ${options.server} (context "${options.context}"): ${problem.reason}`,
        'error' in answer ? { cause: answer.error } : undefined,
      );
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}
