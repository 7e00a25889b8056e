/**
 * The data mover's stages of statemachines/backup.asl.json (MoveVolumeData) and restore.asl.json
 * (RestoreVolumeData), run by the local interpreter with stand-in handlers: each job the volume
 * step hands out runs as one ecs:runTask.sync task with the job in its container override, at
 * most MaxConcurrency at once; a task that fails is retried, and one that keeps failing is
 * reported back to the volume step by job id and error, never failing the workflow; the volume
 * step is called again with what ran.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BACKUP_DEFINITION, LOCAL_FUNCTION_ARNS } from '../../cli/local/backup-runtime.js';
import { LOCAL_RESTORE_FUNCTION_ARNS, RESTORE_DEFINITION } from '../../cli/local/restore-runtime.js';
import {
  type JsonValue,
  runLocalStateMachine,
  substitute,
} from '../../shared/adapters/local-state-machine.js';

type Task = {
  Cluster: string;
  TaskDefinition: string;
  Overrides: { ContainerOverrides: { Name: string; Environment: { Name: string; Value: string }[] }[] };
};

const job = (jobId: string) => ({
  kind: 'block-backup',
  jobId,
  repository: { directory: '/r', keyFile: '/k' },
  source: { snapshotId: 'snap-1' },
});

/** A stand-in data mover: records each task's job; `fail` names jobs whose task fails (as ECS reports it). */
function dataMover(fail: ReadonlySet<string> = new Set()) {
  const ran: { jobId: string; container: string; cluster: string }[] = [];
  let running = 0;
  let mostAtOnce = 0;
  const handler = async (input: JsonValue): Promise<JsonValue> => {
    const task = input as unknown as Task;
    const [container] = task.Overrides.ContainerOverrides;
    const variable = container?.Environment.find((e) => e.Name === 'LIFEBOAT_DATA_MOVER_JOB');
    const { jobId } = JSON.parse(variable?.Value ?? '{}') as { jobId: string };
    ran.push({ jobId, container: container?.Name ?? '', cluster: task.Cluster });
    running++;
    mostAtOnce = Math.max(mostAtOnce, running);
    try {
      await new Promise((resolve) => setTimeout(resolve, 5));
    } finally {
      running--;
    }
    if (fail.has(jobId))
      throw Object.assign(new Error('Essential container exited'), { name: 'States.TaskFailed' });
    return { StopCode: 'EssentialContainerExited' };
  };
  return { handler, ran, mostAtOnce: () => mostAtOnce };
}

describe('MoveVolumeData in the backup', () => {
  const run = {
    name: 'b',
    cluster: 'c',
    runId: 'r',
    startedAt: 't',
    expiration: 't',
    itemBlocksTimeoutSeconds: 5,
  };
  const jobs = Array.from({ length: 12 }, (_, i) => job(`b_vol-${i}_20260101T000000Z`));

  it('runs every job handed out, at most 8 at once, retries a failing one, and hands back each by id without failing', async () => {
    const mover = dataMover(new Set(['b_vol-3_20260101T000000Z']));
    const looks: JsonValue[] = [];
    const output = await runLocalStateMachine({
      // Retried at once: these tests check the flow, not how long it waits.
      retryIntervalMs: 0,
      definition: substitute(readFileSync(BACKUP_DEFINITION, 'utf8'), LOCAL_FUNCTION_ARNS),
      input: { request: {} },
      executionName: 'x',
      taskToken: 't',
      handlers: {
        ValidateBackup: async () => ({ valid: true, run }),
        CollectItems: async () => ({ messages: 1, blocks: 1, items: 1, volumeOperations: [] }),
        VolumeOperations: async (input) => {
          looks.push(input);
          const first = looks.length === 1;
          return {
            done: !first,
            total: 12,
            completed: first ? 0 : 11,
            failed: first ? 0 : 1,
            pending: first ? 12 : 0,
            waitSeconds: 0,
            moveJobs: first ? jobs : [],
          };
        },
        RunDataMover: mover.handler,
        FinalizeBackup: async () => ({ name: 'b', phase: 'PartiallyFailed' }),
        RecordBackupFailure: async () => ({ failureReason: 'unexpected' }),
      },
    });
    expect(output).toEqual({ name: 'b', phase: 'PartiallyFailed' });
    // 12 jobs, the failing one run 3 times (two retries).
    expect(mover.ran).toHaveLength(14);
    expect(mover.ran.filter((r) => r.jobId === 'b_vol-3_20260101T000000Z')).toHaveLength(3);
    expect(new Set(mover.ran.map((r) => r.container))).toEqual(new Set(['data-mover']));
    expect(new Set(mover.ran.map((r) => r.cluster))).toEqual(
      new Set([LOCAL_FUNCTION_ARNS.DataMoverClusterArn]),
    );
    expect(mover.mostAtOnce()).toBeLessThanOrEqual(8);
    expect(mover.mostAtOnce()).toBeGreaterThan(1);
    expect(looks[0]).toEqual({ run, moved: [] });
    expect(looks[1]).toEqual({
      run,
      moved: jobs.map((j) =>
        j.jobId === 'b_vol-3_20260101T000000Z'
          ? { jobId: j.jobId, error: 'States.TaskFailed' }
          : { jobId: j.jobId },
      ),
    });
  });
});

describe('RestoreVolumeData in the restore', () => {
  const run = { name: 'r', backupName: 'b', cluster: 'c', runId: 'x', startedAt: 't', dryRun: false };

  it('runs the restore jobs before the phases and calls RestoreVolumes again with what ran', async () => {
    const mover = dataMover(new Set(['r_restore_2']));
    const calls: string[] = [];
    const inputs: JsonValue[] = [];
    const answers: JsonValue[] = [
      { done: false, pending: 2, waitSeconds: 0, moveJobs: [job('r_restore_1'), job('r_restore_2')] },
      { done: true, pending: 0, waitSeconds: 0 },
    ];
    const output = await runLocalStateMachine({
      // Retried at once: these tests check the flow, not how long it waits.
      retryIntervalMs: 0,
      definition: substitute(readFileSync(RESTORE_DEFINITION, 'utf8'), LOCAL_RESTORE_FUNCTION_ARNS),
      input: { request: {} },
      executionName: 'x',
      taskToken: 't',
      handlers: {
        ValidateRestore: async () => ({ valid: true, run }),
        PlanRestore: async () => ({
          dryRun: false,
          totalItems: 1,
          skipped: 0,
          nativeVolumes: 2,
          phases: [{ index: 0, groupResource: 'persistentvolumes', chunks: 1, items: 1, chunkIndexes: [0] }],
        }),
        RestoreVolumes: async (input) => {
          calls.push('RestoreVolumes');
          inputs.push(input);
          return answers.shift() ?? null;
        },
        RunRestoreDataMover: async (input) => {
          calls.push('RunRestoreDataMover');
          return mover.handler(input);
        },
        RestorePhase: async () => {
          calls.push('RestorePhase');
          return { phase: 'persistentvolumes', chunk: 0, created: 1, updated: 0, skipped: 0, failed: 0 };
        },
        RestoreHooks: async () => ({ pending: 0, waitSeconds: 0, settled: 0 }),
        FinalizeRestore: async () => ({ name: 'r', phase: 'PartiallyFailed' }),
      },
    });
    expect(output).toEqual({ name: 'r', phase: 'PartiallyFailed' });
    expect(calls.filter((c) => c !== 'RunRestoreDataMover')).toEqual([
      'RestoreVolumes',
      'RestoreVolumes',
      'RestorePhase',
    ]);
    expect(calls.indexOf('RestorePhase')).toBeGreaterThan(calls.lastIndexOf('RunRestoreDataMover'));
    expect(inputs).toEqual([
      { run, moved: [] },
      { run, moved: [{ jobId: 'r_restore_1' }, { jobId: 'r_restore_2', error: 'States.TaskFailed' }] },
    ]);
  });

  it('runs the file-restore jobs PatchProvisionedVolumes hands out after the phases, before the hooks', async () => {
    const mover = dataMover();
    const calls: string[] = [];
    const inputs: JsonValue[] = [];
    const answers: JsonValue[] = [
      { done: false, pending: 1, waitSeconds: 0, moveJobs: [job('r_restore_files')] },
      { done: true, pending: 0, waitSeconds: 0 },
    ];
    await runLocalStateMachine({
      // Retried at once: these tests check the flow, not how long it waits.
      retryIntervalMs: 0,
      definition: substitute(readFileSync(RESTORE_DEFINITION, 'utf8'), LOCAL_RESTORE_FUNCTION_ARNS),
      input: { request: {} },
      executionName: 'x',
      taskToken: 't',
      handlers: {
        ValidateRestore: async () => ({ valid: true, run }),
        PlanRestore: async () => ({
          dryRun: false,
          totalItems: 1,
          skipped: 0,
          provisionedVolumes: 1,
          phases: [
            { index: 0, groupResource: 'persistentvolumeclaims', chunks: 1, items: 1, chunkIndexes: [0] },
          ],
        }),
        RestorePhase: async () => {
          calls.push('RestorePhase');
          return { phase: 'persistentvolumeclaims', chunk: 0, created: 1, updated: 0, skipped: 0, failed: 0 };
        },
        PatchProvisionedVolumes: async (input) => {
          calls.push('PatchProvisionedVolumes');
          inputs.push(input);
          return answers.shift() ?? null;
        },
        RunFileRestoreDataMover: async (input) => {
          calls.push('RunFileRestoreDataMover');
          return mover.handler(input);
        },
        RestoreHooks: async () => {
          calls.push('RestoreHooks');
          return { pending: 0, waitSeconds: 0, settled: 0 };
        },
        FinalizeRestore: async () => ({ name: 'r', phase: 'Completed' }),
      },
    });
    expect(calls).toEqual([
      'RestorePhase',
      'PatchProvisionedVolumes',
      'RunFileRestoreDataMover',
      'PatchProvisionedVolumes',
      'RestoreHooks',
    ]);
    expect(inputs).toEqual([
      { run, moved: [] },
      { run, moved: [{ jobId: 'r_restore_files' }] },
    ]);
  });
});
