/**
 * A local run whose state machine failed (FailedValidation, or a step that gave up): its error
 * and cause printed in two lines, exit status 1. Anything else is not this module's to say.
 */
import { ExecutionFailed } from '../shared/adapters/local-state-machine.js';
import type { Io } from './verb-call.js';

/** A `catch` handler: reports an ExecutionFailed and resolves to 1; rethrows anything else. */
export function executionFailure(options: { readonly what: string; readonly io: Io }): (error: unknown) => 1 {
  return (error) => {
    if (!(error instanceof ExecutionFailed)) throw error;
    options.io.err.write(`${options.what}: ${error.failure.error}\n${error.failure.cause}\n`);
    return 1;
  };
}
