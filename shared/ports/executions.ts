/**
 * The orchestrator as the API sees it: start a workflow's execution by name, and look one up.
 * Step Functions in AWS, the local state machine runner under `lifeboat server --local`. An
 * execution's name is its idempotency key: starting the same name with the same input again
 * is not a new execution.
 */

/** The workflows Lifeboat runs (one state machine each). */
export type Workflow = 'backup' | 'restore' | 'delete' | 'drill';

export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';

export interface Execution {
  readonly workflow: Workflow;
  readonly name: string;
  readonly status: ExecutionStatus;
  /** The input it was started with, as JSON text. */
  readonly input: string;
  readonly startDate: Date;
  readonly stopDate?: Date;
  /** The output, as JSON text, once it SUCCEEDED. */
  readonly output?: string;
  /** The error name and cause, once it FAILED. */
  readonly error?: string;
  readonly cause?: string;
}

export interface Executions {
  /**
   * Starts an execution. Resolves `started: false` when one of that name already exists with the
   * same input (a retried request); rejects with `ExecutionNameInUse` when its input differs.
   */
  start(options: {
    readonly workflow: Workflow;
    readonly name: string;
    readonly input: string;
    readonly signal?: AbortSignal;
  }): Promise<{ readonly started: boolean }>;
  /** The execution of that name, if there is one. */
  describe(options: {
    readonly workflow: Workflow;
    readonly name: string;
    readonly signal?: AbortSignal;
  }): Promise<Execution | undefined>;
}
