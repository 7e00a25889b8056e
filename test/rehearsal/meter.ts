/**
 * What a rehearsal run would be billed for, counted as it happens: Lambda invocations and their
 * GB-seconds (billed duration, rounded up to the millisecond, times configured memory), Step
 * Functions state transitions, API requests by service and operation (SQS, S3 by request class,
 * KMS, EC2, EBS direct), and Fargate vCPU- and GB-seconds (one minute minimum per task). Prices
 * come from prices.ts; the meter itself only counts.
 */

export interface Usage {
  readonly lambda: { invocations: number; gbSeconds: number };
  readonly stateTransitions: number;
  /** Requests by `service:Operation`. */
  readonly requests: Record<string, number>;
  readonly fargate: { tasks: number; vcpuSeconds: number; gbSeconds: number };
  /** Invocations by function name, for the handler coverage check. */
  readonly invocationsByFunction: Record<string, number>;
}

export class Meter {
  private invocations = 0;
  private gbSeconds = 0;
  private transitions = 0;
  private readonly byRequest = new Map<string, number>();
  private readonly byFunction = new Map<string, number>();
  private tasks = 0;
  private vcpuSeconds = 0;
  private taskGbSeconds = 0;

  request(options: { caller: string; service: string; operation: string }): void {
    const key = `${options.service}:${options.operation}`;
    this.byRequest.set(key, (this.byRequest.get(key) ?? 0) + 1);
  }

  invocation(options: { functionName: string; memoryMb: number; durationMs: number }): void {
    this.invocations++;
    this.gbSeconds += (options.memoryMb / 1024) * (Math.ceil(options.durationMs) / 1000);
    this.byFunction.set(options.functionName, (this.byFunction.get(options.functionName) ?? 0) + 1);
  }

  transition(count = 1): void {
    this.transitions += count;
  }

  task(options: { cpu: number; memoryMb: number; durationMs: number }): void {
    this.tasks++;
    const seconds = Math.max(60, options.durationMs / 1000);
    this.vcpuSeconds += (options.cpu / 1024) * seconds;
    this.taskGbSeconds += (options.memoryMb / 1024) * seconds;
  }

  usage(): Usage {
    return {
      lambda: { invocations: this.invocations, gbSeconds: this.gbSeconds },
      stateTransitions: this.transitions,
      requests: Object.fromEntries([...this.byRequest].sort()),
      fargate: { tasks: this.tasks, vcpuSeconds: this.vcpuSeconds, gbSeconds: this.taskGbSeconds },
      invocationsByFunction: Object.fromEntries([...this.byFunction].sort()),
    };
  }
}
