/**
 * The volume steps of statemachines/restore.asl.json, run by the local interpreter with stand-in
 * handlers: RestoreVolumes before any phase, called again after its wait while volumes are being
 * created; PatchProvisionedVolumes after every phase, looping likewise; both skipped when the
 * plan has no such volumes (as a plan written before they existed).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LOCAL_RESTORE_FUNCTION_ARNS, RESTORE_DEFINITION } from '../../cli/local/restore-runtime.js';
import {
  type JsonValue,
  runLocalStateMachine,
  substitute,
} from '../../shared/adapters/local-state-machine.js';

const definition = substitute(readFileSync(RESTORE_DEFINITION, 'utf8'), LOCAL_RESTORE_FUNCTION_ARNS);
const run = { name: 'r', backupName: 'b', cluster: 'c', runId: 'x', startedAt: 't', dryRun: false };

async function execute(options: {
  plan: Record<string, JsonValue>;
  volumes: JsonValue[];
  provisioned: JsonValue[];
}) {
  const calls: string[] = [];
  const inputs: Record<string, JsonValue[]> = {};
  const step =
    (name: string, answers: JsonValue[] = []) =>
    async (input: JsonValue): Promise<JsonValue> => {
      calls.push(name);
      inputs[name] = [...(inputs[name] ?? []), input];
      return answers.shift() ?? { done: true, pending: 0, waitSeconds: 0 };
    };
  const output = await runLocalStateMachine({
    // Retried at once: these tests check the flow, not how long it waits.
    retryIntervalMs: 0,
    definition,
    input: { request: {} },
    executionName: 'x',
    taskToken: 't',
    handlers: {
      ValidateRestore: async () => ({ valid: true, run }),
      PlanRestore: async () => ({
        dryRun: false,
        totalItems: 2,
        skipped: 0,
        phases: [
          { index: 0, groupResource: 'persistentvolumes', chunks: 1, items: 1, chunkIndexes: [0] },
          { index: 1, groupResource: 'persistentvolumeclaims', chunks: 1, items: 1, chunkIndexes: [0] },
        ],
        ...options.plan,
      }),
      RestoreVolumes: step('RestoreVolumes', options.volumes),
      RestorePhase: async (input) => {
        const { phase } = input as { phase: { groupResource: string } };
        calls.push(`RestorePhase ${phase.groupResource}`);
        return { phase: phase.groupResource, chunk: 0, created: 1, updated: 0, skipped: 0, failed: 0 };
      },
      PatchProvisionedVolumes: step('PatchProvisionedVolumes', options.provisioned),
      RestoreHooks: async () => {
        calls.push('RestoreHooks');
        return { pending: 0, waitSeconds: 0, settled: 0 };
      },
      FinalizeRestore: async () => {
        calls.push('FinalizeRestore');
        return { name: 'r', phase: 'Completed' };
      },
    },
  });
  return { output, calls, inputs };
}

describe('the volume steps of a restore', () => {
  it('creates volumes before the phases and patches re-provisioned PVs after them, each looping until done', async () => {
    const { output, calls, inputs } = await execute({
      plan: { nativeVolumes: 2, provisionedVolumes: 1 },
      volumes: [
        { done: false, pending: 2, waitSeconds: 0 },
        { done: false, pending: 1, waitSeconds: 0 },
        { done: true, pending: 0, waitSeconds: 0 },
      ],
      provisioned: [{ done: false, pending: 1, waitSeconds: 0 }],
    });
    expect(output).toEqual({ name: 'r', phase: 'Completed' });
    expect(calls).toEqual([
      'RestoreVolumes',
      'RestoreVolumes',
      'RestoreVolumes',
      'RestorePhase persistentvolumes',
      'RestorePhase persistentvolumeclaims',
      'PatchProvisionedVolumes',
      'PatchProvisionedVolumes',
      'RestoreHooks',
      'FinalizeRestore',
    ]);
    // Only the run goes in (and the data-mover jobs run so far: none here):
    // the plan and earlier results stay out of the payload.
    for (const input of inputs.RestoreVolumes ?? []) expect(input).toEqual({ run, moved: [] });
    for (const input of inputs.PatchProvisionedVolumes ?? []) expect(input).toEqual({ run, moved: [] });
  });

  it.each<[string, Record<string, JsonValue>]>([
    ['a plan without volume counts', {}],
    ['a plan with none', { nativeVolumes: 0, provisionedVolumes: 0 }],
  ])('skips both steps for %s', async (_, plan) => {
    const { calls } = await execute({ plan, volumes: [], provisioned: [] });
    expect(calls).toEqual([
      'RestorePhase persistentvolumes',
      'RestorePhase persistentvolumeclaims',
      'RestoreHooks',
      'FinalizeRestore',
    ]);
  });

  it('records the failure and ends RestoreFailed when volume creation fails for good, before any phase', async () => {
    // A handler that throws a terminal error: the Catch records it, then ends RestoreFailed.
    const recorded: JsonValue[] = [];
    await expect(
      runLocalStateMachine({
        // Retried at once: these tests check the flow, not how long it waits.
        retryIntervalMs: 0,
        definition,
        input: { request: {} },
        executionName: 'y',
        taskToken: 't',
        handlers: {
          ValidateRestore: async () => ({ valid: true, run }),
          PlanRestore: async () => ({
            dryRun: false,
            totalItems: 0,
            skipped: 0,
            phases: [],
            nativeVolumes: 1,
          }),
          RestoreVolumes: async () => {
            throw Object.assign(new Error('the volume plan is gone'), { name: 'LifeboatError' });
          },
          RestorePhase: async () => {
            throw new Error('no phase may run');
          },
          FinalizeRestore: async () => ({}),
          RecordRestoreFailure: async (input) => {
            recorded.push(input);
            return {};
          },
        },
      }),
    ).rejects.toMatchObject({
      failure: { error: 'RestoreFailed', cause: expect.stringContaining('the volume plan is gone') },
    });
    expect(recorded).toEqual([
      {
        run,
        failure: { Error: 'LifeboatError', Cause: expect.stringContaining('the volume plan is gone') },
      },
    ]);
  });
});
