/**
 * Errors of the adapters: what stops a command from reaching its cluster, named by the file,
 * context, variable or server at fault. Both are terminal for the run; neither ever carries a
 * kubeconfig's credentials.
 */
import { LifeboatError } from '../domain/errors.js';

/** No usable kubeconfig: missing, unreadable, or without the context or cluster asked for. */
export class KubeconfigProblem extends LifeboatError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KubeconfigProblem';
  }
}

/** The Kubernetes API server could not be reached (or refused us), after brief retries. */
export class ClusterUnreachable extends LifeboatError {
  readonly server: string;

  constructor(server: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ClusterUnreachable';
    this.server = server;
  }
}
