/**
 * Running a command in a pod's container, as hooks do (Velero pkg/podexec): through the
 * apiserver's `exec` subresource, never on a node. Implemented over WebSocket by
 * shared/adapters/kubernetes-pod-exec.ts.
 */
import type { CommandResult } from '../domain/hooks/plan.js';

export interface PodExecRequest {
  readonly namespace: string;
  readonly pod: string;
  readonly container: string;
  /** The argument list; no shell is added. */
  readonly command: readonly string[];
  /** How long to wait for the command's status; past it the result says `timedOut`. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

export interface PodExecResult extends CommandResult {
  /** Bytes dropped from the head of stdout / stderr: only a tail of each is kept. */
  readonly stdoutDroppedBytes: number;
  readonly stderrDroppedBytes: number;
  /** The streaming subprotocol the apiserver chose (`v5.channel.k8s.io` or `v4.channel.k8s.io`). */
  readonly protocol?: string;
}

export interface PodExec {
  /**
   * Runs the command and reports how it ended: its exit code (from the protocol's status channel),
   * or that it timed out, or why it has no exit code. A command that ran and failed is a result,
   * not an error. Throws `PodExecRefused` when the apiserver refuses to start it (no such pod or
   * container, forbidden) and `RetryableError` when the apiserver cannot be reached or answers
   * 429/5xx, in both cases before anything ran; rejects with the signal's reason when aborted.
   */
  exec(request: PodExecRequest): Promise<PodExecResult>;
}
