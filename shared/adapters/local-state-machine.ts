/**
 * Runs an ASL definition in this process with aws-local-stepfunctions, each Task state
 * resolved to a local handler (the same use cases Lambda runs). Placeholders are replaced
 * with local ARNs first. Node 20 lacks Promise.withResolvers, which the library uses.
 */
import 'core-js/actual/promise/with-resolvers.js';
import { ExecutionError, StateMachine } from 'aws-local-stepfunctions';
import { LifeboatError } from '../domain/errors.js';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** One event of the execution's history (state entered/exited, Map iteration started, …). */
export type ExecutionEvent =
  ReturnType<StateMachine['run']>['eventLogs'] extends AsyncGenerator<infer E> ? E : never;

export interface LocalExecutionFailure {
  readonly error: string;
  readonly cause: string;
}

/** A failed execution: the ASL error name and cause, as Step Functions reports them. */
export class ExecutionFailed extends LifeboatError {
  readonly failure: LocalExecutionFailure;

  constructor(failure: LocalExecutionFailure) {
    super(`${failure.error}: ${failure.cause}`);
    this.name = 'ExecutionFailed';
    this.failure = failure;
  }
}

/** Replaces `${Name}` placeholders with the given values, failing on any left unset. */
export function substitute(definition: string, values: Readonly<Record<string, string>>): string {
  return definition.replace(/\$\{([A-Za-z0-9]+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined)
      throw new LifeboatError(`no value for the state machine placeholder \${${name}}`);
    return value;
  });
}

export async function runLocalStateMachine(options: {
  definition: string;
  input: JsonValue;
  handlers: Readonly<Record<string, (input: JsonValue) => Promise<JsonValue>>>;
  executionName: string;
  taskToken: string;
  /** Receives the execution's history, event by event (the local GetExecutionHistory). */
  onEvent?: (event: ExecutionEvent) => void;
  /**
   * The wait before each retry of a failed Task (default 1 s): shorter than the deployment's
   * growing intervals, but long enough that a store or apiserver gone for a moment is outlasted
   * (an SDK's own retries stop early once its retry quota is spent in an outage).
   */
  retryIntervalMs?: number;
}): Promise<JsonValue> {
  const definition = JSON.parse(options.definition) as ConstructorParameters<typeof StateMachine>[0];
  // The definitions are validated by the statemachines tests; compiling the validator on every
  // run would cost more than a small backup.
  const machine = new StateMachine(definition, { validationOptions: { noValidate: true } });
  const retryIntervalOverrides = Object.fromEntries(
    Object.keys(options.handlers).map((name) => [name, options.retryIntervalMs ?? 1000]),
  );
  const execution = machine.run(options.input, {
    overrides: { taskResourceLocalHandlers: options.handlers, retryIntervalOverrides },
    context: {
      Execution: { Name: options.executionName, Id: `local:${options.executionName}` },
      Task: { Token: options.taskToken },
    },
  });
  const onEvent = options.onEvent;
  const history = onEvent
    ? (async () => {
        for await (const event of execution.eventLogs) onEvent(event);
      })()
    : undefined;
  try {
    const output = (await execution.result) as JsonValue;
    // The history ends with the execution's end event: every event has been seen.
    await history;
    return output;
  } catch (error) {
    await history?.catch(() => undefined);
    if (error instanceof ExecutionError) {
      const cause = (error as { cause?: unknown }).cause as
        | { name?: string; message?: string; cause?: string }
        | undefined;
      throw new ExecutionFailed({
        error: cause?.name ?? 'States.Runtime',
        cause: String(cause?.cause ?? cause?.message ?? error.message),
      });
    }
    throw error;
  }
}
