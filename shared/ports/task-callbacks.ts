/**
 * Waking a state machine that waits on a task token (`.waitForTaskToken`): Step Functions
 * SendTaskSuccess/SendTaskFailure in AWS, a promise locally.
 */
export interface TaskCallbacks {
  /** Idempotent: completing an already completed task is not an error. */
  succeed(token: string, output: unknown): Promise<void>;
  fail(token: string, error: { name: string; cause: string }): Promise<void>;
}
