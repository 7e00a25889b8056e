/**
 * Step Functions, for the rehearsal: each state machine of the template runs its definition as
 * the template renders it (DefinitionString with its DefinitionSubstitutions resolved to the
 * rehearsal's ARNs) in aws-local-stepfunctions. Every Task state is resolved by its Resource, as
 * Step Functions would: a Lambda ARN invokes that function (lambda.ts); `lambda:invoke
 * .waitForTaskToken` invokes FunctionName with its Payload and a task token of its own, then waits
 * for the SendTaskSuccess or SendTaskFailure that reaches the gateway; `ecs:runTask.sync` runs the
 * task (tasks.ts). The state machine's role must allow each (lambda:InvokeFunction, RunTask, …).
 * State transitions are metered. Executions are kept by ARN, so the API's StartExecution (same
 * name and input while running: the same execution; else ExecutionAlreadyExists) and
 * DescribeExecution reach them through the gateway; each end is told to `onEnded` (the
 * EventBridge rules on "Execution Status Change", event-rules.ts) before it is answered.
 */
import 'core-js/actual/promise/with-resolvers.js';
import { randomUUID } from 'node:crypto';
import { ExecutionError, StateMachine } from 'aws-local-stepfunctions';
import type { Deployment } from './deploy.js';
import type { ExecutionApi, TaskCallbacks } from './gateway.js';
import type { IamPolicies } from './iam.js';
import type { LambdaService } from './lambda.js';
import type { Meter } from './meter.js';
import { type EcsTasks, stateMachineRole } from './tasks.js';
import { type Json, resolve, resolveString, resourcesOf } from './template.js';

export interface DeployedStateMachine {
  readonly logicalId: string;
  readonly arn: string;
  readonly name: string;
  readonly roleArn: string;
  readonly definition: Record<string, Json>;
}

export interface ExecutionOutcome {
  readonly status: 'SUCCEEDED' | 'FAILED';
  readonly output?: Json;
  readonly error?: string;
  readonly cause?: string;
}

type Handler = (input: Json) => Promise<Json>;

const executionArnOf = (machine: DeployedStateMachine, name: string): string =>
  `${machine.arn.replace(':stateMachine:', ':execution:')}:${name}`;

function named(name: string, message: string): Error {
  return Object.assign(new Error(message), { name });
}

export function stateMachinesOf(deployment: Deployment): DeployedStateMachine[] {
  const { resolver, assembly } = deployment;
  return resourcesOf(assembly.template, 'AWS::StepFunctions::StateMachine').map(([id, r]) => {
    const p = r.Properties ?? {};
    const values = resolve(resolver, p.DefinitionSubstitutions ?? {}) as Record<string, Json>;
    const text = resolveString(resolver, p.DefinitionString ?? null).replace(
      /\$\{([A-Za-z0-9]+)\}/g,
      (whole, name: string) => (name in values ? String(values[name]) : whole),
    );
    const physical = resolver.physical.get(id);
    return {
      logicalId: id,
      arn: physical?.ref ?? '',
      name: physical?.attributes.Name ?? id,
      roleArn: stateMachineRole(deployment, id),
      definition: JSON.parse(text) as Record<string, Json>,
    };
  });
}

/** Every Task state of a definition, nested Map and Parallel states included. */
function taskStates(states: Record<string, Json>): [string, Record<string, Json>][] {
  return Object.entries(states).flatMap(([name, raw]) => {
    const state = raw as Record<string, Json>;
    const nested = [state.Iterator, state.ItemProcessor, ...((state.Branches ?? []) as Json[])]
      .filter((s): s is Record<string, Json> => typeof s === 'object' && s !== null)
      .flatMap((s) => taskStates(s.States as Record<string, Json>));
    return state.Type === 'Task' ? [[name, state] as [string, Record<string, Json>], ...nested] : nested;
  });
}

/** An execution as DescribeExecution tells it. */
export interface ExecutionRecord {
  readonly executionArn: string;
  readonly stateMachineArn: string;
  readonly name: string;
  /** The input as JSON text. */
  readonly input: string;
  readonly startDate: Date;
  status: 'RUNNING' | 'SUCCEEDED' | 'FAILED';
  stopDate?: Date;
  output?: string;
  error?: string;
  cause?: string;
}

export class StepFunctions implements TaskCallbacks, ExecutionApi {
  readonly machines: Map<string, DeployedStateMachine>;
  readonly executions = new Map<string, ExecutionRecord>();
  /** Executions the API started, still running. */
  private readonly started = new Set<Promise<unknown>>();
  /** Told of every execution's end, before it is answered (EventBridge's rules). */
  onEnded: ((execution: ExecutionRecord) => Promise<void>) | undefined;
  private readonly waiting = new Map<
    string,
    { machine: string; settle: (output: Json, error?: Error) => void }
  >();
  /** Every task token handed out, by the state machine it belongs to (settled ones too). */
  private readonly issued = new Map<string, string>();

  constructor(
    private readonly options: {
      deployment: Deployment;
      lambda: LambdaService;
      tasks: EcsTasks;
      iam: IamPolicies;
      meter: Meter;
    },
  ) {
    this.machines = new Map(
      stateMachinesOf(options.deployment).flatMap((m) => [[m.arn, m] as const, [m.name, m] as const]),
    );
  }

  stateMachineOf(token: string): string | undefined {
    return this.issued.get(token);
  }

  isWaiting(token: string): boolean {
    return this.waiting.has(token);
  }

  settle(options: { operation: string; body: Record<string, unknown> }): void {
    const token = String(options.body.taskToken ?? '');
    const waiter = this.waiting.get(token);
    if (!waiter || options.operation === 'SendTaskHeartbeat') return;
    this.waiting.delete(token);
    if (options.operation === 'SendTaskSuccess')
      waiter.settle(JSON.parse(String(options.body.output ?? 'null')) as Json);
    else
      waiter.settle(
        null,
        named(String(options.body.error ?? 'States.TaskFailed'), String(options.body.cause ?? '')),
      );
  }

  private async authorize(
    machine: DeployedStateMachine,
    call: { action: string; resources: string[]; context?: Record<string, string> },
  ) {
    const decision = await this.options.iam.evaluate({
      principal: machine.roleArn,
      caller: machine.name,
      ...call,
    });
    if (!decision.allowed)
      throw named('States.Runtime', `the state machine's role may not: ${decision.detail}`);
  }

  private async invokeLambda(
    machine: DeployedStateMachine,
    options: { functionArn: string; payload: Json },
  ): Promise<Json> {
    const fn = this.options.lambda.functionNamed(options.functionArn);
    await this.authorize(machine, { action: 'lambda:InvokeFunction', resources: [fn.arn] });
    const result = await this.options.lambda.invoke(fn.arn, options.payload);
    if (!result.ok) throw named(result.error.errorType, result.error.errorMessage);
    return result.value;
  }

  private waitForToken(machine: DeployedStateMachine, token: string): Promise<Json> {
    this.issued.set(token, machine.arn);
    return new Promise((done, fail) => {
      this.waiting.set(token, {
        machine: machine.arn,
        settle: (output, error) => (error ? fail(error) : done(output)),
      });
    });
  }

  private handlerOf(machine: DeployedStateMachine, state: Record<string, Json>): Handler {
    const resource = String(state.Resource);
    if (resource.startsWith('arn:aws:lambda:'))
      return (input) => this.invokeLambda(machine, { functionArn: resource, payload: input });
    if (resource === 'arn:aws:states:::lambda:invoke.waitForTaskToken')
      return async (input) => {
        const { FunctionName, Payload } = input as { FunctionName: string; Payload: Record<string, Json> };
        // A token of this task's own: the local interpreter gives one per execution.
        const token = `rehearsal-${randomUUID()}`;
        const payload = JSON.parse(
          JSON.stringify(Payload)
            .split(JSON.stringify(Payload.taskToken ?? ''))
            .join(JSON.stringify(token)),
        ) as Json;
        const result = this.waitForToken(machine, token);
        await this.invokeLambda(machine, { functionArn: FunctionName, payload });
        return result;
      };
    if (resource === 'arn:aws:states:::states:startExecution.sync:2')
      return (input) => this.nestedExecution(machine, input as Record<string, Json>);
    if (resource === 'arn:aws:states:::ecs:runTask.sync')
      return (input) =>
        this.options.tasks.runTask({
          parameters: input as Record<string, Json>,
          machine: machine.name,
          machineRoleArn: machine.roleArn,
        });
    throw new Error(`rehearsal: the Task resource ${resource} is not supported`);
  }

  /**
   * startExecution.sync:2: the parent's role must start the child machine, describe its execution
   * and keep the managed rule Step Functions follows it by; the child's output comes back parsed,
   * its failure as States.TaskFailed with the child's description as cause.
   */
  private async nestedExecution(machine: DeployedStateMachine, input: Record<string, Json>): Promise<Json> {
    const child = this.machines.get(String(input.StateMachineArn ?? ''));
    if (!child)
      throw named('StateMachineDoesNotExist', `State Machine Does Not Exist: '${input.StateMachineArn}'`);
    const name = typeof input.Name === 'string' ? input.Name : randomUUID();
    const [, , , region, account] = machine.arn.split(':');
    const rule = `arn:aws:events:${region}:${account}:rule/StepFunctionsGetEventsForStepFunctionsExecutionRule`;
    await this.authorize(machine, { action: 'states:StartExecution', resources: [child.arn] });
    await this.authorize(machine, {
      action: 'states:DescribeExecution',
      resources: [executionArnOf(child, name)],
    });
    for (const action of ['events:PutTargets', 'events:PutRule', 'events:DescribeRule'])
      await this.authorize(machine, { action, resources: [rule] });
    const childInput =
      typeof input.Input === 'string' ? (JSON.parse(input.Input) as Json) : (input.Input ?? {});
    const outcome = await this.startExecution({ stateMachine: child.arn, input: childInput, name });
    const described = this.describe(executionArnOf(child, name)) ?? {};
    if (outcome.status !== 'SUCCEEDED')
      throw Object.assign(
        named(
          'States.TaskFailed',
          JSON.stringify({ ...described, Error: outcome.error, Cause: outcome.cause }),
        ),
        {
          cause: JSON.stringify({ ...described, Error: outcome.error, Cause: outcome.cause }),
        },
      );
    return {
      ExecutionArn: executionArnOf(child, name),
      Name: name,
      Status: outcome.status,
      Output: outcome.output ?? null,
    } as Json;
  }

  /** StartExecution as the API calls it: runs in the background, answered at once. */
  start(body: Record<string, unknown>): { executionArn: string; startDate: number } {
    const machine = this.machines.get(String(body.stateMachineArn ?? ''));
    if (!machine)
      throw named('StateMachineDoesNotExist', `State Machine Does Not Exist: '${body.stateMachineArn}'`);
    const name = typeof body.name === 'string' ? body.name : randomUUID();
    const input = typeof body.input === 'string' ? body.input : '{}';
    const executionArn = executionArnOf(machine, name);
    const existing = this.executions.get(executionArn);
    if (existing && !(existing.status === 'RUNNING' && existing.input === input))
      throw named('ExecutionAlreadyExists', `Execution Already Exists: '${executionArn}'`);
    if (!existing) {
      const run = this.startExecution({ stateMachine: machine.arn, input: JSON.parse(input) as Json, name });
      this.started.add(run);
      // An interpreter failure (not the execution's) is the test's: settled() lets the test see it.
      const forget = () => this.started.delete(run);
      run.then(forget, forget);
    }
    const startDate = this.executions.get(executionArn)?.startDate ?? new Date();
    return { executionArn, startDate: startDate.getTime() / 1000 };
  }

  describe(executionArn: string): Record<string, unknown> | undefined {
    const e = this.executions.get(executionArn);
    if (!e) return undefined;
    return {
      executionArn: e.executionArn,
      stateMachineArn: e.stateMachineArn,
      name: e.name,
      status: e.status,
      input: e.input,
      startDate: e.startDate.getTime() / 1000,
      ...(e.stopDate ? { stopDate: e.stopDate.getTime() / 1000 } : {}),
      ...(e.output !== undefined ? { output: e.output } : {}),
      ...(e.error !== undefined ? { error: e.error } : {}),
      ...(e.cause !== undefined ? { cause: e.cause } : {}),
    };
  }

  /** Waits for the executions the API started (a test's end). */
  async settled(): Promise<void> {
    await Promise.all([...this.started]);
  }

  async startExecution(options: {
    stateMachine: string;
    input: Json;
    name?: string;
  }): Promise<ExecutionOutcome> {
    const machine = this.machines.get(options.stateMachine);
    if (!machine) throw new Error(`rehearsal: no state machine ${options.stateMachine}`);
    const name = options.name ?? randomUUID();
    const record: ExecutionRecord = {
      executionArn: executionArnOf(machine, name),
      stateMachineArn: machine.arn,
      name,
      input: JSON.stringify(options.input),
      startDate: new Date(),
      status: 'RUNNING',
    };
    this.executions.set(record.executionArn, record);
    const outcome = await this.run(machine, { input: options.input, name });
    Object.assign(record, {
      status: outcome.status,
      stopDate: new Date(),
      ...(outcome.output !== undefined ? { output: JSON.stringify(outcome.output) } : {}),
      ...(outcome.error !== undefined ? { error: outcome.error, cause: outcome.cause ?? '' } : {}),
    });
    await this.onEnded?.(record);
    return outcome;
  }

  private async run(
    machine: DeployedStateMachine,
    options: { input: Json; name: string },
  ): Promise<ExecutionOutcome> {
    const handlers = Object.fromEntries(
      taskStates(machine.definition.States as Record<string, Json>).map(([name, state]) => [
        name,
        this.handlerOf(machine, state),
      ]),
    );
    const runner = new StateMachine(machine.definition as never, { validationOptions: { noValidate: true } });
    const executionName = options.name;
    const execution = runner.run(options.input as never, {
      overrides: { taskResourceLocalHandlers: handlers as never },
      context: {
        Execution: {
          Name: executionName,
          Id: executionArnOf(machine, executionName),
        },
        Task: { Token: 'rehearsal-execution-token' },
      },
    });
    const counting = (async () => {
      for await (const event of execution.eventLogs)
        if ((event as { type?: string }).type === 'StateEntered') this.options.meter.transition();
    })();
    try {
      const output = (await execution.result) as Json;
      await counting;
      return { status: 'SUCCEEDED', output };
    } catch (error) {
      await counting.catch(() => undefined);
      if (!(error instanceof ExecutionError)) throw error;
      const cause = (error as { cause?: { name?: string; message?: string; cause?: string } }).cause;
      return {
        status: 'FAILED',
        error: cause?.name ?? 'States.Runtime',
        cause: String(cause?.cause ?? cause?.message ?? error.message),
      };
    }
  }
}
