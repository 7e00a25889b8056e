/**
 * The API's orchestrator in AWS: Step Functions executions of the stack's state machines, one
 * per workflow. An execution's name is the idempotency key (Step Functions itself answers a
 * StartExecution of a running execution's name and input with that execution); another input
 * under a name in use is AlreadyExists. Throttling and 5xx are retryable (the SDK retries them
 * first); nothing here reads or logs an execution's input beyond returning it.
 */
import {
  DescribeExecutionCommand,
  SFNClient,
  SFNServiceException,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import { AlreadyExists } from '../domain/errors.js';
import type { Execution, ExecutionStatus, Executions, Workflow } from '../ports/executions.js';
import { awsErrorOf } from './aws-errors.js';

const RETRYABLE = new Set(['ThrottlingException', 'ServiceUnavailable', 'InternalServerError']);

export class SfnExecutions implements Executions {
  constructor(
    private readonly client: SFNClient,
    /** Each workflow's state machine ARN. */
    private readonly machines: Readonly<Record<Workflow, string>>,
  ) {}

  private executionArn(workflow: Workflow, name: string): string {
    return `${this.machines[workflow].replace(':stateMachine:', ':execution:')}:${name}`;
  }

  async start(options: {
    workflow: Workflow;
    name: string;
    input: string;
    signal?: AbortSignal;
  }): Promise<{ started: boolean }> {
    try {
      await this.client.send(
        new StartExecutionCommand({
          stateMachineArn: this.machines[options.workflow],
          name: options.name,
          input: options.input,
        }),
        options.signal ? { abortSignal: options.signal } : {},
      );
      return { started: true };
    } catch (error) {
      if (error instanceof SFNServiceException && error.name === 'ExecutionAlreadyExists')
        throw new AlreadyExists(`an execution named "${options.name}"`);
      throw this.failure(error, `StartExecution ${options.name}`, options.signal);
    }
  }

  async describe(options: {
    workflow: Workflow;
    name: string;
    signal?: AbortSignal;
  }): Promise<Execution | undefined> {
    try {
      const found = await this.client.send(
        new DescribeExecutionCommand({ executionArn: this.executionArn(options.workflow, options.name) }),
        options.signal ? { abortSignal: options.signal } : {},
      );
      return {
        workflow: options.workflow,
        name: options.name,
        status: (found.status ?? 'RUNNING') as ExecutionStatus,
        input: found.input ?? '',
        startDate: found.startDate ?? new Date(0),
        ...(found.stopDate ? { stopDate: found.stopDate } : {}),
        ...(found.output !== undefined ? { output: found.output } : {}),
        ...(found.error !== undefined ? { error: found.error } : {}),
        ...(found.cause !== undefined ? { cause: found.cause } : {}),
      };
    } catch (error) {
      if (error instanceof SFNServiceException && error.name === 'ExecutionDoesNotExist') return undefined;
      throw this.failure(error, `DescribeExecution ${options.name}`, options.signal);
    }
  }

  private failure(error: unknown, what: string, signal?: AbortSignal): unknown {
    return awsErrorOf(error, { what, signal, service: SFNServiceException, retryableCodes: RETRYABLE });
  }
}

/** The API's executions in a region, with the SDK's retries of throttling and 5xx. */
export function sfnExecutions(options: {
  region: string;
  machines: Readonly<Record<Workflow, string>>;
}): SfnExecutions {
  return new SfnExecutions(new SFNClient({ region: options.region, maxAttempts: 8 }), options.machines);
}
