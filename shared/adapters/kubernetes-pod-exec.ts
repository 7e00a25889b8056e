/**
 * The PodExec port over the apiserver's `exec` subresource, with @kubernetes/client-node's `Exec`
 * (v1.4) on a WebSocket of our own. Why our own socket rather than client-node's default handler:
 * - it offers only `v5.channel.k8s.io` then `v4.channel.k8s.io`: both carry the command's end as a
 *   JSON Status on channel 3, so an exit code is always reported exactly (the default handler also
 *   offers v1–v3, whose error channel is plain text that the client would fail to parse);
 * - a refused handshake (no such container: HTTP 400) is read for the apiserver's message instead
 *   of the bare "Unexpected server response: 400";
 * - the v5 close-stream frame (channel 255) is not routed to process.stdout as the default does.
 * Against a 1.30+ apiserver v5 is chosen, and the apiserver speaks SPDY to the kubelet.
 * Authentication is the KubeConfig's: a kubeconfig file locally, the EKS token in Lambda.
 * Never logs the command's output: the caller decides where it goes.
 */
import { Writable } from 'node:stream';
import { Exec, type KubeConfig, type V1Status } from '@kubernetes/client-node';
import WebSocket from 'ws';
import { LifeboatError, RetryableError } from '../domain/errors.js';
import type { PodExec, PodExecRequest, PodExecResult } from '../ports/pod-exec.js';
import { OutputTail } from './output-tail.js';

/** The longest delay Node's timers keep (2^31 - 1 ms); a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The apiserver refused to start the command: no such pod or container, or forbidden. Terminal. */
export class PodExecRefused extends LifeboatError {
  readonly statusCode: number;

  constructor(options: { statusCode: number; message: string }) {
    super(options.message);
    this.name = 'PodExecRefused';
    this.statusCode = options.statusCode;
  }
}

export const EXEC_PROTOCOLS: readonly string[] = ['v5.channel.k8s.io', 'v4.channel.k8s.io'];
/** Velero keeps all of a hook's output; a Lambda keeps the last 64 KiB of each stream. */
export const DEFAULT_OUTPUT_LIMIT_BYTES = 64 * 1024;
const CLOSE_STREAM_CHANNEL = 255;
const MAX_ERROR_BODY_BYTES = 16 * 1024;

/** How a v4/v5 Status ends a command: exit code 0, the NonZeroExitCode cause, or why there is none. */
export function exitOf(status: Partial<V1Status>): { exitCode?: number; error?: string } {
  if (status.status === 'Success') return { exitCode: 0 };
  if (status.reason === 'NonZeroExitCode') {
    const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
    const code = Number(cause?.message);
    if (cause?.message !== undefined && Number.isInteger(code)) return { exitCode: code };
  }
  return { error: status.message || 'the command failed without an exit code' };
}

/** The message of a Kubernetes Status body, or its first characters. */
function messageOf(body: string): string {
  try {
    const parsed = JSON.parse(body) as { message?: unknown };
    if (typeof parsed.message === 'string' && parsed.message) return parsed.message;
  } catch {
    // not JSON
  }
  return body.slice(0, 300).trim();
}

function handshakeError(options: { statusCode: number; body: string; where: string }): Error {
  const message = `exec in ${options.where} refused (HTTP ${options.statusCode}): ${messageOf(options.body)}`;
  if (options.statusCode === 429 || options.statusCode >= 500) return new RetryableError(message);
  return new PodExecRefused({ statusCode: options.statusCode, message });
}

/** client-node's WebSocketInterface (not exported by the package), on a `ws` socket we hold. */
class ExecSocket {
  socket?: WebSocket;
  private cancelled = false;
  /** An error thrown while routing a frame (a malformed status): the exec fails with it. */
  frameError?: unknown;

  private readonly kc: KubeConfig;
  private readonly where: string;
  private readonly protocols: readonly string[];

  constructor(options: { kc: KubeConfig; where: string; protocols: readonly string[] }) {
    this.kc = options.kc;
    this.where = options.where;
    this.protocols = options.protocols;
  }

  cancel(): void {
    this.cancelled = true;
    this.socket?.terminate();
  }

  async connect(
    path: string,
    _textHandler: ((text: string) => boolean) | null,
    binaryHandler: ((stream: number, buff: Buffer) => boolean) | null,
  ): Promise<WebSocket> {
    const server = this.kc.getCurrentCluster()?.server;
    if (!server) throw new LifeboatError('the kubeconfig has no current cluster');
    const options: WebSocket.ClientOptions = {};
    await this.kc.applyToHTTPSOptions(options);
    if (this.cancelled) throw new LifeboatError('the exec was cancelled before it connected');
    const socket = new WebSocket(`${server.replace(/^http/, 'ws')}${path}`, [...this.protocols], options);
    this.socket = socket;
    return await new Promise<WebSocket>((resolve, reject) => {
      socket.on('open', () => resolve(socket));
      // Every error must have a listener; before open it rejects the connect.
      socket.on('error', (error) =>
        reject(new RetryableError(`exec in ${this.where}: ${error.message}`, { cause: error })),
      );
      socket.on('unexpected-response', (request, response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          if (size < MAX_ERROR_BODY_BYTES) chunks.push(chunk);
          size += chunk.length;
        });
        response.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          reject(handshakeError({ statusCode: response.statusCode ?? 0, body, where: this.where }));
          request.destroy();
        });
        response.on('error', (error) => reject(new RetryableError(error.message, { cause: error })));
      });
      socket.on('message', (data, isBinary) => {
        // v4 and v5 frames are binary: one channel byte, then the payload.
        if (!isBinary) return;
        const frame = Buffer.isBuffer(data)
          ? data
          : Array.isArray(data)
            ? Buffer.concat(data)
            : Buffer.from(data);
        const channel = frame[0];
        if (channel === undefined || channel === CLOSE_STREAM_CHANNEL) return;
        try {
          if (binaryHandler && !binaryHandler(channel, frame.subarray(1))) socket.close();
        } catch (error) {
          this.frameError = error;
          socket.close();
        }
      });
    });
  }
}

/** How an exec ended: the command's end as the protocol told it, or an error before it ran. */
type Ending =
  | { readonly end: { readonly exitCode?: number; readonly timedOut: boolean; readonly error?: string } }
  | { readonly error: unknown };

function sink(tail: OutputTail): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      tail.push(Buffer.from(chunk));
      callback();
    },
  });
}

export class KubernetesPodExec implements PodExec {
  private readonly kc: KubeConfig;
  private readonly outputLimitBytes: number;
  private readonly protocols: readonly string[];

  /** `protocols` narrows the offer (e.g. to v4 alone, to prove the fallback); both carry a status. */
  constructor(
    kc: KubeConfig,
    options: {
      outputLimitBytes?: number;
      protocols?: readonly ('v5.channel.k8s.io' | 'v4.channel.k8s.io')[];
    } = {},
  ) {
    this.kc = kc;
    this.outputLimitBytes = options.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES;
    this.protocols = options.protocols ?? EXEC_PROTOCOLS;
  }

  async exec(request: PodExecRequest): Promise<PodExecResult> {
    request.signal?.throwIfAborted();
    const where = `pod ${request.namespace}/${request.pod} container ${request.container}`;
    const started = performance.now();
    const stdout = new OutputTail(this.outputLimitBytes);
    const stderr = new OutputTail(this.outputLimitBytes);
    const socket = new ExecSocket({ kc: this.kc, where, protocols: this.protocols });

    return await new Promise<PodExecResult>((resolve, reject) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      const finish = (ending: Ending): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        request.signal?.removeEventListener('abort', onAbort);
        socket.cancel();
        if ('error' in ending) {
          reject(ending.error);
          return;
        }
        resolve({
          ...ending.end,
          stdout: stdout.text(),
          stderr: stderr.text(),
          stdoutDroppedBytes: stdout.droppedBytes,
          stderrDroppedBytes: stderr.droppedBytes,
          durationMs: Math.round(performance.now() - started),
          ...(socket.socket?.protocol ? { protocol: socket.socket.protocol } : {}),
        });
      };
      const onAbort = (): void => finish({ error: request.signal?.reason });
      request.signal?.addEventListener('abort', onAbort, { once: true });
      // Velero: "it is not currently possible to ensure the command is terminated when the
      // timeout occurs"; we stop waiting and close the stream, and say so exactly.
      // A timer holds at most 2^31 - 1 ms (24.8 days); a longer one would fire at once.
      timer = setTimeout(
        () => finish({ end: { timedOut: true } }),
        Math.min(request.timeoutMs, MAX_TIMER_MS),
      );

      startCommand({ kc: this.kc, socket, request, stdout, stderr, finish });
    });
  }
}

/**
 * Starts the command on the socket: its output goes to the tails, and it finishes with the status
 * frame, or with the stream's close when no status came (or it could not be read).
 */
function startCommand(options: {
  kc: KubeConfig;
  socket: ExecSocket;
  request: PodExecRequest;
  stdout: OutputTail;
  stderr: OutputTail;
  finish: (ending: Ending) => void;
}): void {
  const { socket, request, finish } = options;
  new Exec(options.kc, socket)
    .exec(
      request.namespace,
      request.pod,
      request.container,
      [...request.command],
      sink(options.stdout),
      sink(options.stderr),
      null,
      false,
      // The status is the last frame: every byte of output has been routed before it.
      (status) => finish({ end: { ...exitOf(status), timedOut: false } }),
    )
    .then((ws) => {
      ws.on('close', (code) => {
        const error =
          socket.frameError instanceof Error
            ? `the exec status could not be read: ${socket.frameError.message}`
            : `the exec stream closed without a status (WebSocket code ${code})`;
        finish({ end: { timedOut: false, error } });
      });
    })
    .catch((error: unknown) => finish({ error }));
}
