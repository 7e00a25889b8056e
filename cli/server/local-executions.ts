/**
 * The orchestrator of `lifeboat server --local`: each execution the API starts runs in this
 * process, as `lifeboat --local` runs it (the same state machine definitions, the same step code),
 * against the cluster its request names and the server's directory; its record (status, input,
 * output or error) is kept in memory while the server runs. Starting a name again with the same
 * input is the same execution; with another input it is refused, as Step Functions does.
 */
import { ExecutionFailed, type JsonValue } from '../../shared/adapters/local-state-machine.js';
import { AlreadyExists } from '../../shared/domain/errors.js';
import type { Execution, Executions, Workflow } from '../../shared/ports/executions.js';

/** Runs one execution of a workflow to its end: its output, or ExecutionFailed. */
export type WorkflowRunner = (options: {
  readonly input: JsonValue;
  readonly executionName: string;
}) => Promise<JsonValue>;

export class LocalExecutions implements Executions {
  private readonly records = new Map<string, Execution>();
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly runners: Readonly<Record<Workflow, WorkflowRunner>>,
    /** Told of each execution once it has ended (the server publishes its event). */
    private readonly onEnded: (execution: Execution) => Promise<void> = async () => undefined,
  ) {}

  async start(options: { workflow: Workflow; name: string; input: string }): Promise<{ started: boolean }> {
    const id = `${options.workflow}/${options.name}`;
    const existing = this.records.get(id);
    if (existing) {
      if (existing.input === options.input) return { started: false };
      throw new AlreadyExists(`execution ${options.name}`);
    }
    const record: Execution = {
      workflow: options.workflow,
      name: options.name,
      status: 'RUNNING',
      input: options.input,
      startDate: new Date(),
    };
    this.records.set(id, record);
    const run = this.run(id, record).finally(() => this.running.delete(run));
    this.running.add(run);
    return { started: true };
  }

  async describe(options: { workflow: Workflow; name: string }): Promise<Execution | undefined> {
    return this.records.get(`${options.workflow}/${options.name}`);
  }

  /** Resolves once every execution started so far has ended. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  private async run(id: string, record: Execution): Promise<void> {
    const runner = this.runners[record.workflow];
    try {
      const output = await runner({
        input: JSON.parse(record.input) as JsonValue,
        executionName: record.name,
      });
      this.records.set(id, {
        ...record,
        status: 'SUCCEEDED',
        stopDate: new Date(),
        output: JSON.stringify(output),
      });
    } catch (error) {
      const failure =
        error instanceof ExecutionFailed
          ? error.failure
          : {
              error: error instanceof Error ? error.name : 'Error',
              cause: error instanceof Error ? error.message : String(error),
            };
      this.records.set(id, { ...record, status: 'FAILED', stopDate: new Date(), ...failure });
    }
    const ended = this.records.get(id);
    if (ended) await this.onEnded(ended);
  }
}
