import { readFileSync } from 'node:fs';
import aslValidator from 'asl-validator';
import { App, Stack } from 'aws-cdk-lib';
import { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import { BACKUP_DEFINITION, LOCAL_FUNCTION_ARNS } from '../../cli/local/backup-runtime.js';
import { LOCAL_RESTORE_FUNCTION_ARNS, RESTORE_DEFINITION } from '../../cli/local/restore-runtime.js';
import { BACKUP_DEFINITION_FILE, backupSubstitutions } from '../../infra/constructs/backup-workflow.js';
import { runTaskSubstitutions } from '../../infra/constructs/fargate-task.js';
import { HOOK_RUNNER_CONTAINER, hookRunnerSubstitutions } from '../../infra/constructs/hook-runner.js';
import { RESTORE_DEFINITION_FILE, restoreSubstitutions } from '../../infra/constructs/restore-workflow.js';
import {
  ExecutionFailed,
  type JsonValue,
  runLocalStateMachine,
  substitute,
} from '../../shared/adapters/local-state-machine.js';
import * as domainErrors from '../../shared/domain/errors.js';

const text = readFileSync(BACKUP_DEFINITION, 'utf8');
/** The data mover task's `${DataMover…}` values, as DataMover.substitutions() makes them. */
const dataMoverValues = runTaskSubstitutions('DataMover', {
  clusterArn: 'arn:aws:ecs:us-east-1:123456789012:cluster/c',
  taskDefinitionArn: 'arn:aws:ecs:us-east-1:123456789012:task-definition/m:1',
  subnetIds: 'subnet-1,subnet-2',
  securityGroupId: 'sg-2',
  assignPublicIp: true,
});
const definition = JSON.parse(text) as { States: Record<string, Record<string, unknown>> };

/** Every state, including those inside Map and Parallel states. */
function allStates(states: Record<string, Record<string, unknown>>): [string, Record<string, unknown>][] {
  return Object.entries(states).flatMap(([name, state]) => {
    const nested = [state.ItemProcessor, state.Iterator, ...((state.Branches as unknown[]) ?? [])] as
      | { States?: Record<string, Record<string, unknown>> }
      | undefined[];
    const children = (nested as ({ States?: Record<string, Record<string, unknown>> } | undefined)[])
      .filter((n) => n?.States)
      .flatMap((n) => allStates(n?.States ?? {}));
    return [[name, state] as [string, Record<string, unknown>], ...children];
  });
}

/** Names Step Functions itself raises, and those of the Lambda service. */
const AWS_ERRORS = new Set([
  'States.ALL',
  'States.Timeout',
  'States.TaskFailed',
  'States.Permissions',
  'States.Runtime',
  'States.HeartbeatTimeout',
  'Lambda.ServiceException',
  'Lambda.TooManyRequestsException',
  'Lambda.SdkClientException',
  'Lambda.AWSLambdaException',
  // ecs:runTask.sync: the ECS API's exceptions, and a RunTask answer with Failures.
  'ECS.AmazonECSException',
  'ECS.ServerException',
  'AmazonECS.Unknown',
]);

function ourErrorNames(): Set<string> {
  const names = new Set<string>();
  for (const value of Object.values(domainErrors)) {
    if (typeof value === 'function' && value.prototype instanceof Error) {
      // Constructors take a message or problems first and may require an options object second.
      names.add((Reflect.construct(value, [[], {}]) as Error).name);
    }
  }
  return names;
}

describe('statemachines/backup.asl.json', () => {
  it('is valid Amazon States Language', () => {
    const { isValid, errorsText } = aslValidator(JSON.parse(substitute(text, LOCAL_FUNCTION_ARNS)));
    expect(errorsText()).toBe('');
    expect(isValid).toBe(true);
  });

  it('has a Comment on every state', () => {
    for (const [name, state] of allStates(definition.States))
      expect(state.Comment, name).toEqual(expect.any(String));
  });

  it('uses exactly the placeholders that infra and the local runtime fill', () => {
    const placeholders = [...new Set([...text.matchAll(/\$\{([A-Za-z0-9]+)\}/g)].map((m) => m[1]))].sort();
    const stack = new Stack(new App(), 'S');
    const f = (id: string) =>
      LambdaFunction.fromFunctionArn(stack, id, `arn:aws:lambda:us-east-1:123456789012:function:${id}`);
    const infra = backupSubstitutions({
      validate: f('v'),
      collect: f('c'),
      finalize: f('f'),
      recordFailure: f('r'),
      volumeOperations: f('vo'),
      hookRunner: hookRunnerSubstitutions({
        clusterArn: 'arn:aws:ecs:us-east-1:123456789012:cluster/c',
        taskDefinitionArn: 'arn:aws:ecs:us-east-1:123456789012:task-definition/t:1',
        subnetIds: 'subnet-1,subnet-2',
        securityGroupId: 'sg-1',
        assignPublicIp: true,
      }),
      dataMover: dataMoverValues,
      recipe: { collect: f('cr'), group: f('rg'), hook: f('rh') },
    });
    expect(Object.keys(infra).sort()).toEqual(placeholders);
    expect(Object.keys(LOCAL_FUNCTION_ARNS).sort()).toEqual(placeholders);
    expect(BACKUP_DEFINITION_FILE).toBe(BACKUP_DEFINITION);
  });

  it('retries and catches only error names that exist', () => {
    const known = new Set([...AWS_ERRORS, ...ourErrorNames()]);
    expect(known).toContain('RetryableError');
    for (const [name, state] of allStates(definition.States)) {
      const rules = [
        ...((state.Retry as { ErrorEquals: string[] }[]) ?? []),
        ...((state.Catch as { ErrorEquals: string[] }[]) ?? []),
      ];
      for (const rule of rules)
        for (const error of rule.ErrorEquals) expect(known, `${name}: ${error}`).toContain(error);
    }
  });

  it('sends every failure after validation to RecordBackupFailure', () => {
    for (const name of [
      'CollectItems',
      'LongHookBlocks',
      'CollectRecipeItems',
      'BackupRecipeGroup',
      'RecipeLongHookBlocks',
      'RunLongRecipeHook',
      'RunRecipeHook',
      'VolumeOperations',
      'FinalizeBackup',
    ]) {
      const catches = definition.States[name]?.Catch as { ErrorEquals: string[]; Next: string }[];
      expect(catches).toContainEqual(
        expect.objectContaining({ ErrorEquals: ['States.ALL'], Next: 'RecordBackupFailure' }),
      );
    }
  });
});

describe('statemachines/restore.asl.json', () => {
  const restoreText = readFileSync(RESTORE_DEFINITION, 'utf8');
  const restoreDefinition = JSON.parse(restoreText) as { States: Record<string, Record<string, unknown>> };

  it('is valid Amazon States Language', () => {
    const { isValid, errorsText } = aslValidator(
      JSON.parse(substitute(restoreText, LOCAL_RESTORE_FUNCTION_ARNS)),
    );
    expect(errorsText()).toBe('');
    expect(isValid).toBe(true);
  });

  it('has a Comment on every state and uses only the placeholders the local runtime fills', () => {
    for (const [name, state] of allStates(restoreDefinition.States))
      expect(state.Comment, name).toEqual(expect.any(String));
    const placeholders = [
      ...new Set([...restoreText.matchAll(/\$\{([A-Za-z0-9]+)\}/g)].map((m) => m[1])),
    ].sort();
    expect(Object.keys(LOCAL_RESTORE_FUNCTION_ARNS).sort()).toEqual(placeholders);
    const stack = new Stack(new App(), 'R');
    const f = (id: string) =>
      LambdaFunction.fromFunctionArn(stack, id, `arn:aws:lambda:us-east-1:123456789012:function:${id}`);
    const infra = restoreSubstitutions({
      validate: f('v'),
      plan: f('p'),
      restoreVolumes: f('rv'),
      patchVolumes: f('pv'),
      phase: f('ph'),
      hooks: f('h'),
      recipeHook: f('rh'),
      finalize: f('f'),
      recordFailure: f('rf'),
      hookRunner: hookRunnerSubstitutions({
        clusterArn: 'arn:aws:ecs:us-east-1:123456789012:cluster/c',
        taskDefinitionArn: 'arn:aws:ecs:us-east-1:123456789012:task-definition/t:1',
        subnetIds: 'subnet-1,subnet-2',
        securityGroupId: 'sg-1',
        assignPublicIp: false,
      }),
      dataMover: dataMoverValues,
    });
    expect(Object.keys(infra).sort()).toEqual(placeholders);
    expect(RESTORE_DEFINITION_FILE).toBe(RESTORE_DEFINITION);
  });

  it('retries and catches only error names that exist, and runs phases one at a time', () => {
    const known = new Set([...AWS_ERRORS, ...ourErrorNames()]);
    for (const [name, state] of allStates(restoreDefinition.States)) {
      const rules = [
        ...((state.Retry as { ErrorEquals: string[] }[]) ?? []),
        ...((state.Catch as { ErrorEquals: string[] }[]) ?? []),
      ];
      for (const rule of rules)
        for (const error of rule.ErrorEquals) expect(known, `${name}: ${error}`).toContain(error);
    }
    expect(restoreDefinition.States.RestorePhases?.MaxConcurrency).toBe(1);
  });

  it('restores each phase by an inner Map that invokes RestorePhase once per chunk, at most ten at a time', () => {
    const phases = restoreDefinition.States.RestorePhases as {
      ItemsPath: string;
      ItemProcessor: { StartAt: string; States: Record<string, Record<string, unknown>> };
    };
    expect(phases.ItemsPath).toBe('$.plan.phases');
    const chunks = phases.ItemProcessor.States[phases.ItemProcessor.StartAt] as {
      Type: string;
      ItemsPath: string;
      MaxConcurrency: number;
      ItemSelector: Record<string, unknown>;
      ItemProcessor: { StartAt: string; States: Record<string, Record<string, unknown>> };
      End: boolean;
    };
    expect(chunks).toMatchObject({ Type: 'Map', ItemsPath: '$.phase.chunkIndexes', End: true });
    expect(chunks.MaxConcurrency).toBeGreaterThan(1);
    expect(chunks.MaxConcurrency).toBeLessThanOrEqual(10);
    expect(chunks.ItemSelector).toMatchObject({ 'chunk.$': '$$.Map.Item.Value' });
    const task = chunks.ItemProcessor.States[chunks.ItemProcessor.StartAt];
    expect(task).toMatchObject({ Type: 'Task', End: true });
    expect(substitute(JSON.stringify(task?.Resource), LOCAL_RESTORE_FUNCTION_ARNS)).toBe(
      JSON.stringify(LOCAL_RESTORE_FUNCTION_ARNS.RestorePhaseFunctionArn),
    );
    // Once a chunk's retries are spent on 429/5xx, one last attempt records those items failed.
    expect(Object.keys(chunks.ItemProcessor.States)).toEqual(['RestorePhase', 'RestorePhaseLastAttempt']);
    expect(task?.Catch).toEqual([
      { ErrorEquals: ['RetryableError'], ResultPath: '$.retriesSpent', Next: 'RestorePhaseLastAttempt' },
    ]);
    expect(chunks.ItemProcessor.States.RestorePhaseLastAttempt).toMatchObject({
      Resource: task?.Resource,
      Parameters: { 'run.$': '$.run', 'phase.$': '$.phase', 'chunk.$': '$.chunk', lastAttempt: true },
      End: true,
    });
  });
});

describe('the restore flow', () => {
  const restoreText = substitute(readFileSync(RESTORE_DEFINITION, 'utf8'), LOCAL_RESTORE_FUNCTION_ARNS);
  const run = { name: 'r', backupName: 'b', cluster: 'c', runId: 'x', startedAt: 't', dryRun: false };
  const phase = (index: number, groupResource: string, chunks: number) => ({
    index,
    groupResource,
    chunks,
    items: chunks * 5,
    chunkIndexes: Array.from({ length: chunks }, (_, i) => i),
  });
  const plan = {
    dryRun: false,
    totalItems: 200,
    skipped: 0,
    phases: [
      phase(0, 'customresourcedefinitions.apiextensions.k8s.io', 3),
      phase(1, 'namespaces', 1),
      phase(2, 'configmaps', 36),
    ],
  };
  const totals = { created: 5, updated: 0, skipped: 0, failed: 0 };

  /** Runs the restore with a RestorePhase that records each call and how many ran at once. */
  async function execute(
    options: {
      restorePhase?: (input: JsonValue) => Promise<void>;
      restoreHooks?: (input: JsonValue) => Promise<JsonValue>;
      /** Receives RecordRestoreFailure's inputs, also when the execution fails. */
      recorded?: JsonValue[];
    } = {},
  ) {
    const calls: {
      phase: number;
      groupResource: string;
      chunk: number;
      input: JsonValue;
      /** Chunks of earlier phases finished when this one started. */
      earlierPhasesDone: number;
    }[] = [];
    const finished: number[] = [];
    let running = 0;
    let mostAtOnce = 0;
    let finalizeInput: JsonValue = null;
    const recorded: JsonValue[] = [];
    /** Each RestoreHooks input, with how many chunks had finished by then. */
    const hookCalls: { input: JsonValue; chunksFinished: number }[] = [];
    const handlers: Record<string, (input: JsonValue) => Promise<JsonValue>> = {
      RestorePhase: async (input) => {
        const { phase: p, chunk } = input as {
          phase: { index: number; groupResource: string };
          chunk: number;
        };
        calls.push({
          phase: p.index,
          groupResource: p.groupResource,
          chunk,
          input,
          earlierPhasesDone: finished.filter((f) => f < p.index).length,
        });
        running++;
        mostAtOnce = Math.max(mostAtOnce, running);
        try {
          await new Promise((resolve) => setTimeout(resolve, 5));
          await options.restorePhase?.(input);
        } finally {
          running--;
        }
        finished.push(p.index);
        return { phase: p.groupResource, chunk, ...totals };
      },
      RestoreHooks: async (input) => {
        hookCalls.push({ input, chunksFinished: finished.length });
        return (await options.restoreHooks?.(input)) ?? { pending: 0, waitSeconds: 0, settled: 0 };
      },
      FinalizeRestore: async (input) => {
        finalizeInput = input;
        return { name: 'r', phase: 'Completed' };
      },
      RecordRestoreFailure: async (input) => {
        recorded.push(input);
        if (options.recorded) options.recorded.push(input);
        return { name: 'r', phase: 'Failed' };
      },
    };
    const output = await runLocalStateMachine({
      // Retried at once: these tests check the flow, not how long it waits.
      retryIntervalMs: 0,
      definition: restoreText,
      input: { request: {} },
      executionName: 'x',
      taskToken: 't',
      handlers: {
        ...handlers,
        ValidateRestore: async () => ({ valid: true, run }),
        PlanRestore: async () => plan,
        // The same function, as in the deployment.
        RestorePhaseLastAttempt: async (input) =>
          (handlers.RestorePhase as (i: JsonValue) => Promise<JsonValue>)(input),
      },
    });
    return { output, calls, finished, mostAtOnce, finalizeInput, hookCalls, recorded };
  }

  it('invokes RestorePhase once per chunk of every phase, with only the run, the phase and the chunk', async () => {
    const { output, calls, finalizeInput } = await execute();
    expect(output).toEqual({ name: 'r', phase: 'Completed' });
    const expected = plan.phases.flatMap((p) => p.chunkIndexes.map((c) => `${p.index}/${c}`));
    expect(calls.map((c) => `${c.phase}/${c.chunk}`).sort()).toEqual(expected.sort());
    expect(calls[0]?.input).toEqual({
      run,
      phase: { index: 0, groupResource: 'customresourcedefinitions.apiextensions.k8s.io' },
      chunk: 0,
    });
    // Nothing of the phases' results reaches the rest of the execution.
    expect(finalizeInput).toEqual({ run });
  });

  it('runs the chunks of a phase in parallel, never more than MaxConcurrency, and phases strictly in order', async () => {
    const { calls, finished, mostAtOnce } = await execute();
    expect(mostAtOnce).toBeGreaterThan(1);
    expect(mostAtOnce).toBeLessThanOrEqual(10);
    // A chunk of a phase starts only after every chunk of the phases before it has finished.
    for (const call of calls) {
      const before = plan.phases.filter((p) => p.index < call.phase).reduce((n, p) => n + p.chunks, 0);
      expect(call.earlierPhasesDone, `${call.phase}/${call.chunk}`).toBe(before);
    }
    expect(calls.map((c) => c.phase)).toEqual([...calls.map((c) => c.phase)].sort((a, b) => a - b));
    expect(finished).toEqual([...finished].sort((a, b) => a - b));
  });

  it('retries a chunk that failed with a RetryableError, and only that chunk', async () => {
    let failures = 0;
    const { output, calls } = await execute({
      restorePhase: async (input) => {
        const { phase: p, chunk } = input as { phase: { index: number }; chunk: number };
        if (p.index === 2 && chunk === 7 && failures < 2) {
          failures++;
          throw Object.assign(new Error('throttled'), { name: 'RetryableError' });
        }
      },
    });
    expect(output).toEqual({ name: 'r', phase: 'Completed' });
    expect(calls.filter((c) => c.phase === 2 && c.chunk === 7)).toHaveLength(3);
    expect(calls).toHaveLength(plan.phases.reduce((n, p) => n + p.chunks, 0) + 2);
  });

  it('runs RestoreHooks after every phase, with only the run, and again after a wait while pods still wait', async () => {
    const answers = [
      { pending: 3, waitSeconds: 0, settled: 1 },
      { pending: 1, waitSeconds: 1, settled: 3 },
      { pending: 0, waitSeconds: 0, settled: 4 },
    ];
    const started = performance.now();
    const result = await execute({
      restoreHooks: async () => answers.shift() ?? { pending: 0, waitSeconds: 0, settled: 4 },
    });
    expect(result.output).toEqual({ name: 'r', phase: 'Completed' });
    const allChunks = plan.phases.reduce((n, p) => n + p.chunks, 0);
    expect(result.hookCalls).toEqual([
      { input: { run }, chunksFinished: allChunks },
      { input: { run }, chunksFinished: allChunks },
      { input: { run }, chunksFinished: allChunks },
    ]);
    expect(answers).toEqual([]);
    // The second answer asked for a one-second wait before the third call.
    expect(performance.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(result.finalizeInput).toEqual({ run });
  });

  it('retries RestoreHooks after a RetryableError and ends RestoreFailed when it fails for good', async () => {
    let attempts = 0;
    const retried = await execute({
      restoreHooks: async () => {
        attempts++;
        if (attempts < 3) throw Object.assign(new Error('apiserver busy'), { name: 'RetryableError' });
        return { pending: 0, waitSeconds: 0, settled: 1 };
      },
    });
    expect(retried.output).toEqual({ name: 'r', phase: 'Completed' });
    expect(attempts).toBe(3);

    const recorded: JsonValue[] = [];
    const failing = execute({
      recorded,
      restoreHooks: async () => {
        throw Object.assign(new Error('the hooks record is missing'), { name: 'LifeboatError' });
      },
    });
    await expect(failing).rejects.toSatisfy(
      (e: unknown) =>
        e instanceof ExecutionFailed &&
        e.failure.error === 'RestoreFailed' &&
        e.failure.cause.includes('the hooks record is missing'),
    );
    // The failure is recorded before the execution ends.
    expect(recorded).toEqual([
      {
        run,
        failure: { Error: 'LifeboatError', Cause: expect.stringContaining('the hooks record is missing') },
      },
    ]);
  });

  it('gives a chunk whose retries are spent on 429/5xx one last attempt, and the restore goes on', async () => {
    const { output, calls, recorded } = await execute({
      restorePhase: async (input) => {
        const {
          phase: p,
          chunk,
          lastAttempt,
        } = input as {
          phase: { index: number };
          chunk: number;
          lastAttempt?: boolean;
        };
        if (p.index === 1 && chunk === 0 && !lastAttempt)
          throw Object.assign(new Error('HTTP 500'), { name: 'RetryableError' });
      },
    });
    expect(output).toEqual({ name: 'r', phase: 'Completed' });
    const tries = calls.filter((c) => c.phase === 1 && c.chunk === 0).map((c) => c.input);
    // The first attempt and its four retries, then the last attempt.
    expect(tries).toHaveLength(6);
    expect(tries.slice(0, 5).every((i) => !(i as { lastAttempt?: boolean }).lastAttempt)).toBe(true);
    expect(tries[5]).toEqual({
      run,
      phase: { index: 1, groupResource: expect.any(String) },
      chunk: 0,
      lastAttempt: true,
    });
    expect(recorded).toEqual([]);
  });

  it('records the failure and ends RestoreFailed when a chunk fails for good, and starts no later phase', async () => {
    const calls: number[] = [];
    const recorded: JsonValue[] = [];
    const failing = execute({
      recorded,
      restorePhase: async (input) => {
        const { phase: p, chunk } = input as { phase: { index: number }; chunk: number };
        calls.push(p.index);
        if (p.index === 0 && chunk === 1)
          throw Object.assign(new Error('the chunk is gone'), { name: 'LifeboatError' });
      },
    });
    await expect(failing).rejects.toSatisfy(
      (e: unknown) =>
        e instanceof ExecutionFailed &&
        e.failure.error === 'RestoreFailed' &&
        e.failure.cause.includes('the chunk is gone'),
    );
    expect(calls.every((p) => p === 0)).toBe(true);
    expect(recorded).toEqual([
      { run, failure: { Error: 'LifeboatError', Cause: expect.stringContaining('the chunk is gone') } },
    ]);
  });
});

describe('the restore flow of a recipe', () => {
  const restoreText = substitute(readFileSync(RESTORE_DEFINITION, 'utf8'), LOCAL_RESTORE_FUNCTION_ARNS);
  const run = { name: 'r', backupName: 'b', cluster: 'c', runId: 'x', startedAt: 't', dryRun: false };
  const phase = (index: number, groupResource: string, chunks: number) => ({
    index,
    groupResource,
    chunks,
    items: chunks,
    chunkIndexes: Array.from({ length: chunks }, (_, i) => i + index),
  });
  const step = (
    index: number,
    kind: 'group' | 'hook',
    name: string,
    phases: ReturnType<typeof phase>[],
    long = false,
  ) => ({
    index,
    kind,
    name,
    phases,
    long,
    items: phases.reduce((n, p) => n + p.items, 0),
  });
  const plan = {
    dryRun: false,
    totalItems: 6,
    skipped: 0,
    phases: [],
    recipe: {
      notInRecipe: 0,
      steps: [
        step(0, 'group', 'volumes', [phase(0, 'namespaces', 1), phase(1, 'persistentvolumeclaims', 2)]),
        step(1, 'hook', 'pre-workload', []),
        step(2, 'group', 'workloads', [phase(2, 'deployments.apps', 3)]),
        step(3, 'hook', 'post-workload', [], true),
      ],
    },
  };

  async function execute(recipeHook: (input: JsonValue) => Promise<JsonValue>) {
    const order: string[] = [];
    const output = await runLocalStateMachine({
      // Retried at once: these tests check the flow, not how long it waits.
      retryIntervalMs: 0,
      definition: restoreText,
      input: { request: {} },
      executionName: 'x',
      taskToken: 't',
      handlers: {
        RunLongRestoreRecipeHook: async (input) => {
          const task = input as {
            Overrides: {
              ContainerOverrides: { Name: string; Environment: { Name: string; Value: string }[] }[];
            };
          };
          const [container] = task.Overrides.ContainerOverrides;
          const payload = JSON.parse(container?.Environment[0]?.Value ?? '{}') as {
            step?: { index?: number };
          };
          order.push(
            `hook runner ${container?.Name} ${container?.Environment[0]?.Name} step ${payload.step?.index}`,
          );
          expect(payload).toEqual({ restore: run, step: { index: 3, name: 'post-workload' } });
          return { StopCode: 'EssentialContainerExited' };
        },
        ValidateRestore: async () => ({ valid: true, run }),
        PlanRestore: async () => plan,
        RestorePhase: async () => {
          throw new Error('a recipe restore restores its phases in its group steps');
        },
        RestoreRecipePhase: async (input) => {
          const { phase: p, chunk } = input as {
            phase: { index: number; groupResource: string };
            chunk: number;
          };
          order.push(`phase ${p.index} ${p.groupResource} chunk ${chunk}`);
          return { phase: p.groupResource, chunk, created: 1, updated: 0, skipped: 0, failed: 0 };
        },
        RunRestoreRecipeHook: async (input) => {
          const { step: s } = input as { step: { index: number; name: string } };
          order.push(`hook ${s.index} ${s.name}`);
          return recipeHook(input);
        },
        RestoreHooks: async () => {
          order.push('RestoreHooks');
          return { pending: 0, waitSeconds: 0, settled: 0 };
        },
        FinalizeRestore: async () => {
          order.push('FinalizeRestore');
          return { name: 'r', phase: 'Completed' };
        },
      },
    });
    return { output, order };
  }

  it('runs the workflow’s steps in order, each group’s phases and chunks before the next step, then the restore’s own hooks', async () => {
    const inputs: JsonValue[] = [];
    const { output, order } = await execute(async (input) => {
      inputs.push(input);
      return { done: true, waitSeconds: 0, attempted: 1, failed: 0 };
    });
    expect(output).toEqual({ name: 'r', phase: 'Completed' });
    expect(order).toEqual([
      'phase 0 namespaces chunk 0',
      'phase 1 persistentvolumeclaims chunk 1',
      'phase 1 persistentvolumeclaims chunk 2',
      'hook 1 pre-workload',
      'phase 2 deployments.apps chunk 2',
      'phase 2 deployments.apps chunk 3',
      'phase 2 deployments.apps chunk 4',
      // A hook step longer than a Lambda: the hook runner task, then its recorded result.
      `hook runner ${HOOK_RUNNER_CONTAINER} LIFEBOAT_HOOK_RUN step 3`,
      'hook 3 post-workload',
      'RestoreHooks',
      'FinalizeRestore',
    ]);
    expect(inputs[0]).toEqual({ run, step: { index: 1, name: 'pre-workload' } });
  });

  it('calls a hook step again after its wait while it waits for its pods', async () => {
    const answers = [
      { done: false, waitSeconds: 0, attempted: 0, failed: 0 },
      { done: false, waitSeconds: 0, attempted: 0, failed: 0 },
    ];
    const { order } = await execute(
      async () => answers.shift() ?? { done: true, waitSeconds: 0, attempted: 1, failed: 0 },
    );
    expect(order.filter((o) => o === 'hook 1 pre-workload')).toHaveLength(3);
    expect(order.indexOf('phase 2 deployments.apps chunk 2')).toBeGreaterThan(
      order.lastIndexOf('hook 1 pre-workload'),
    );
  });

  it('stops the workflow at a hook step that fails with RecipeStepFailed, and still finishes the restore', async () => {
    const { output, order } = await execute(async () => {
      throw Object.assign(new Error('pre-workload failed'), { name: 'RecipeStepFailed' });
    });
    expect(output).toEqual({ name: 'r', phase: 'Completed' });
    expect(order).toEqual([
      'phase 0 namespaces chunk 0',
      'phase 1 persistentvolumeclaims chunk 1',
      'phase 1 persistentvolumeclaims chunk 2',
      'hook 1 pre-workload',
      'RestoreHooks',
      'FinalizeRestore',
    ]);
  });
});

describe('the backup flow', () => {
  const run = {
    name: 'b',
    cluster: 'c',
    runId: 'r',
    startedAt: 't',
    expiration: 't',
    itemBlocksTimeoutSeconds: 5,
  };
  const handlers = (over: Record<string, (input: JsonValue) => Promise<JsonValue>> = {}) => ({
    ValidateBackup: async () => ({ valid: true, run }),
    CollectItems: async () => ({ messages: 1, blocks: 1, items: 1, volumeOperations: [] }),
    VolumeOperations: async () => ({
      done: true,
      total: 0,
      completed: 0,
      failed: 0,
      pending: 0,
      waitSeconds: 0,
    }),
    FinalizeBackup: async () => ({ name: 'b', phase: 'Completed' }),
    RecordBackupFailure: async (input: JsonValue) => ({
      name: 'b',
      phase: 'Failed',
      failureReason: JSON.stringify(input),
    }),
    ...over,
  });
  const execute = (h: ReturnType<typeof handlers>) =>
    runLocalStateMachine({
      // Retried at once: these tests check the flow, not how long it waits.
      retryIntervalMs: 0,
      definition: substitute(text, LOCAL_FUNCTION_ARNS),
      input: { request: {} },
      handlers: h,
      executionName: 'x',
      taskToken: 't',
    });

  it('ends with FinalizeBackup output', async () => {
    await expect(execute(handlers())).resolves.toEqual({ name: 'b', phase: 'Completed' });
  });

  it('looks at the volume operations again after a wait until all have settled, then finalizes', async () => {
    const looks: JsonValue[] = [];
    let finalizedAfter = -1;
    const h = handlers({
      VolumeOperations: async (input) => {
        looks.push(input);
        const done = looks.length === 3;
        return { done, total: 2, completed: done ? 2 : 0, failed: 0, pending: done ? 0 : 2, waitSeconds: 0 };
      },
      FinalizeBackup: async () => {
        finalizedAfter = looks.length;
        return { name: 'b', phase: 'Completed' };
      },
    });
    await expect(execute(h)).resolves.toEqual({ name: 'b', phase: 'Completed' });
    // The run, and no data-mover job run yet.
    expect(looks).toEqual([
      { run, moved: [] },
      { run, moved: [] },
      { run, moved: [] },
    ]);
    expect(finalizedAfter).toBe(3);
    expect(definition.States.WaitForVolumeOperations).toMatchObject({
      Type: 'Wait',
      SecondsPath: '$.volumes.waitSeconds',
      Next: 'VolumeOperations',
    });
  });

  it('runs one hook runner task per ItemBlock left for a long hook run, with the run and the block as its input, before finalizing', async () => {
    const calls: string[] = [];
    const tasks: JsonValue[] = [];
    const h = {
      ...handlers({
        CollectItems: async () => ({
          messages: 2,
          blocks: 3,
          items: 9,
          volumeOperations: [],
          longHookBlocks: ['m-1/b-1', 'm-2/b-3'],
        }),
        FinalizeBackup: async () => {
          calls.push('FinalizeBackup');
          return { name: 'b', phase: 'Completed' };
        },
      }),
      RunLongHookBlock: async (input: JsonValue) => {
        calls.push('RunLongHookBlock');
        tasks.push(input);
        return { StopCode: 'EssentialContainerExited' };
      },
    };
    await expect(execute(h)).resolves.toEqual({ name: 'b', phase: 'Completed' });
    expect(calls).toEqual(['RunLongHookBlock', 'RunLongHookBlock', 'FinalizeBackup']);
    const overrides = tasks.map(
      (t) =>
        (t as { Overrides: { ContainerOverrides: { Name: string; Environment: unknown[] }[] } }).Overrides,
    );
    expect(overrides.map((o) => o.ContainerOverrides[0]?.Environment).sort()).toEqual([
      [{ Name: 'LIFEBOAT_HOOK_RUN', Value: JSON.stringify({ run, block: 'm-1/b-1' }) }],
      [{ Name: 'LIFEBOAT_HOOK_RUN', Value: JSON.stringify({ run, block: 'm-2/b-3' }) }],
    ]);
    expect(overrides[0]?.ContainerOverrides[0]?.Name).toBe(HOOK_RUNNER_CONTAINER);
    expect(tasks[0]).toMatchObject({
      LaunchType: 'FARGATE',
      Cluster: LOCAL_FUNCTION_ARNS.HookRunnerClusterArn,
      TaskDefinition: LOCAL_FUNCTION_ARNS.HookRunnerTaskDefinitionArn,
      NetworkConfiguration: {
        AwsvpcConfiguration: { Subnets: ['subnet-local'], SecurityGroups: ['sg-local'] },
      },
    });
  });

  it('starts no hook runner task when no block was left for one', async () => {
    let ran = 0;
    const h = {
      ...handlers({
        CollectItems: async () => ({
          messages: 1,
          blocks: 1,
          items: 1,
          volumeOperations: [],
          longHookBlocks: [],
        }),
      }),
      RunLongHookBlock: async () => {
        ran++;
        return {};
      },
    };
    await expect(execute(h)).resolves.toEqual({ name: 'b', phase: 'Completed' });
    expect(ran).toBe(0);
  });

  describe('with a recipe', () => {
    const steps = [
      { index: 0, kind: 'hook', name: 'checkpoint', long: true, messages: 0, items: 0 },
      { index: 1, kind: 'hook', name: 'pre-backup', long: false, messages: 0, items: 0 },
      { index: 2, kind: 'group', name: 'volumes', long: false, messages: 2, items: 4 },
      { index: 3, kind: 'hook', name: 'post-backup', long: false, messages: 0, items: 0 },
      { index: 4, kind: 'group', name: 'resources', long: false, messages: 5, items: 40 },
    ];
    /** Runs a backup naming a recipe; every step's call is recorded as `<index>:<state>`. */
    const executeRecipe = async (over: Record<string, (input: JsonValue) => Promise<JsonValue>> = {}) => {
      const calls: string[] = [];
      const inputs: Record<string, JsonValue[]> = {};
      const record = (state: string, index: unknown, input: JsonValue) => {
        calls.push(`${String(index)}:${state}`);
        inputs[state] = [...(inputs[state] ?? []), input];
      };
      const h = {
        ...handlers({
          CollectItems: async () => {
            calls.push('CollectItems');
            return { messages: 0, blocks: 0, items: 0, volumeOperations: [] };
          },
          FinalizeBackup: async () => {
            calls.push('FinalizeBackup');
            return { name: 'b', phase: 'Completed' };
          },
        }),
        CollectRecipeItems: async () => ({ valid: true, attempt: 'a', steps }),
        BackupRecipeGroup: async (input: JsonValue) => {
          const payload = (input as { Payload: { step: { index: number } } }).Payload;
          record('BackupRecipeGroup', payload.step.index, input);
          return {
            messages: 2,
            blocks: 2,
            items: 4,
            volumeOperations: [],
            longHookBlocks: payload.step.index === 4 ? ['m/b'] : [],
          };
        },
        RunRecipeLongHookBlock: async (input: JsonValue) => {
          record(
            'RunRecipeLongHookBlock',
            (input as { Overrides?: unknown }).Overrides ? 'task' : '?',
            input,
          );
          return {};
        },
        RunLongRecipeHook: async (input: JsonValue) => {
          record('RunLongRecipeHook', 'task', input);
          return {};
        },
        RunRecipeHook: async (input: JsonValue) => {
          record('RunRecipeHook', (input as { step: { index: number } }).step.index, input);
          return { hooks: { attempted: 1, failed: 0 } };
        },
        ...over,
      };
      const output = await runLocalStateMachine({
        // Retried at once: these tests check the flow, not how long it waits.
        retryIntervalMs: 0,
        definition: substitute(text, LOCAL_FUNCTION_ARNS),
        input: { request: { backup: { spec: { recipe: { configMap: { name: 'r' } } } } } },
        handlers: h,
        executionName: 'x',
        taskToken: 't',
      });
      return { output, calls, inputs };
    };

    it('runs the workflow’s steps in order, one at a time, each to its end, then finalizes', async () => {
      const { output, calls, inputs } = await executeRecipe();
      expect(output).toEqual({ name: 'b', phase: 'Completed' });
      expect(calls).toEqual([
        'task:RunLongRecipeHook',
        '0:RunRecipeHook',
        '1:RunRecipeHook',
        '2:BackupRecipeGroup',
        '3:RunRecipeHook',
        '4:BackupRecipeGroup',
        'task:RunRecipeLongHookBlock',
        'FinalizeBackup',
      ]);
      expect(inputs.BackupRecipeGroup?.[0]).toMatchObject({
        Payload: { run, step: steps[2], taskToken: 't' },
      });
      expect(inputs.RunRecipeHook?.[0]).toEqual({ run, step: steps[0] });
      type RunTask = { Overrides: { ContainerOverrides: { Environment: unknown }[] } };
      const environmentOf = (input: JsonValue | undefined) =>
        (input as RunTask | undefined)?.Overrides.ContainerOverrides[0]?.Environment;
      expect(environmentOf(inputs.RunLongRecipeHook?.[0])).toEqual([
        { Name: 'LIFEBOAT_HOOK_RUN', Value: JSON.stringify({ run, step: steps[0] }) },
      ]);
      const block = environmentOf(inputs.RunRecipeLongHookBlock?.[0]);
      expect(block).toEqual([{ Name: 'LIFEBOAT_HOOK_RUN', Value: JSON.stringify({ run, block: 'm/b' }) }]);
      expect(definition.States.BackupRecipeGroup).toMatchObject({
        Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
        TimeoutSecondsPath: '$.Payload.run.itemBlocksTimeoutSeconds',
      });
    });

    it('stops at a hook step that fails with RecipeStepFailed and still writes the backup', async () => {
      const { output, calls } = await executeRecipe({
        RunRecipeHook: async (input: JsonValue) => {
          const index = (input as { step: { index: number } }).step.index;
          if (index === 1) throw Object.assign(new Error('pre-backup failed'), { name: 'RecipeStepFailed' });
          return {};
        },
      });
      expect(output).toEqual({ name: 'b', phase: 'Completed' });
      expect(calls).toEqual(['task:RunLongRecipeHook', 'FinalizeBackup']);
    });

    it('ends FailedValidation with the recipe’s problems, running no step', async () => {
      const failing = executeRecipe({
        CollectRecipeItems: async () => ({
          valid: false,
          problems: [],
          summary:
            'backup.spec.recipe(ConfigMap velero/r).data["r.yaml"].workflows.backup[2].group: no group named "x"',
        }),
      });
      await expect(failing).rejects.toSatisfy(
        (e: unknown) =>
          e instanceof ExecutionFailed &&
          e.failure.error === 'FailedValidation' &&
          e.failure.cause.includes('workflows.backup[2].group'),
      );
    });
  });

  it('ends FailedValidation with the problems as cause', async () => {
    const h = handlers({
      ValidateBackup: async () => ({ valid: false, problems: [], summary: 'spec.ttl: bad' }),
    });
    await expect(execute(h)).rejects.toSatisfy(
      (e: unknown) =>
        e instanceof ExecutionFailed &&
        e.failure.error === 'FailedValidation' &&
        e.failure.cause === 'spec.ttl: bad',
    );
  });

  it('retries a RetryableError and then continues', async () => {
    let attempts = 0;
    const h = handlers({
      CollectItems: async () => {
        attempts++;
        if (attempts < 3) throw Object.assign(new Error('throttled'), { name: 'RetryableError' });
        return { messages: 1, blocks: 1, items: 1, volumeOperations: [] };
      },
    });
    await expect(execute(h)).resolves.toEqual({ name: 'b', phase: 'Completed' });
    expect(attempts).toBe(3);
  });

  it('records a failure and ends BackupFailed', async () => {
    let recorded: JsonValue = null;
    const h = handlers({
      FinalizeBackup: async () => {
        throw Object.assign(new Error('disk on fire'), { name: 'LifeboatError' });
      },
      RecordBackupFailure: async (input) => {
        recorded = input;
        return { name: 'b', phase: 'Failed', failureReason: 'LifeboatError: disk on fire' };
      },
    });
    await expect(execute(h)).rejects.toSatisfy(
      (e: unknown) =>
        e instanceof ExecutionFailed &&
        e.failure.error === 'BackupFailed' &&
        e.failure.cause === 'LifeboatError: disk on fire',
    );
    expect(recorded).toMatchObject({ run, failure: { Error: 'LifeboatError' } });
  });
});
