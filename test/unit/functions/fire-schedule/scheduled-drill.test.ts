import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readDrillReport } from '../../../../functions/common/drill-records.js';
import { finishDrill } from '../../../../functions/finish-drill/finish-drill.js';
import { fireSchedule } from '../../../../functions/fire-schedule/fire-schedule.js';
import { createSchedule, getSchedule, setSchedulePaused } from '../../../../functions/schedules/schedules.js';
import { startDrill } from '../../../../functions/start-drill/start-drill.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import { validateDrillRequest } from '../../../../shared/contracts/drill.js';
import { drillSummary } from '../../../../shared/domain/drills/report.js';
import { AlreadyExists } from '../../../../shared/domain/errors.js';
import { backupDocument } from '../../../../shared/domain/storage/backup-document.js';
import { backupKeys } from '../../../../shared/domain/storage/keys.js';
import type { Execution, Executions, Workflow } from '../../../../shared/ports/executions.js';

/** The orchestrator port in memory: executions stay RUNNING until `end` is called. */
class FakeExecutions implements Executions {
  readonly records = new Map<string, Execution>();
  async start(options: { workflow: Workflow; name: string; input: string }) {
    const id = `${options.workflow}/${options.name}`;
    const existing = this.records.get(id);
    if (existing) {
      if (existing.input === options.input) return { started: false };
      throw new AlreadyExists(`execution ${options.name}`);
    }
    this.records.set(id, { ...options, status: 'RUNNING', startDate: new Date() });
    return { started: true };
  }
  async describe(options: { workflow: Workflow; name: string }) {
    return this.records.get(`${options.workflow}/${options.name}`);
  }
  end(workflow: Workflow, name: string): void {
    const id = `${workflow}/${name}`;
    const record = this.records.get(id);
    if (record) this.records.set(id, { ...record, status: 'SUCCEEDED' });
  }
  started(workflow: Workflow): string[] {
    return [...this.records.values()].filter((r) => r.workflow === workflow).map((r) => r.name);
  }
}

const at = (iso: string) => new Date(iso);

async function setUp(drill: Record<string, unknown> | null = { cluster: 'dr' }) {
  const store = new LocalDirectoryStore(await mkdtemp(join(tmpdir(), 'lifeboat-fire-drill-')));
  const executions = new FakeExecutions();
  const clock = { now: () => at('2026-11-28T00:00:00Z') };
  const timer = { put: async () => undefined, remove: async () => undefined };
  const deps = { store, executions, clock, timer };
  await createSchedule(
    {
      cluster: 'prod',
      ...(drill ? { drill } : {}),
      schedule: { metadata: { name: 'weekly' }, spec: { schedule: '0 3 * * 0' } },
    },
    deps,
  );
  /** A Completed backup of the schedule, as its workflow leaves it. */
  const completed = async (name: string, startedAt: string) => {
    const doc = backupDocument({
      name,
      labels: { 'velero.io/schedule-name': 'weekly' },
      spec: {},
      startedAt: at(startedAt),
      expiration: at('2027-01-01T00:00:00Z'),
      phase: 'Completed',
    });
    await store.put(backupKeys(name).metadata, JSON.stringify(doc));
    executions.end('backup', name);
  };
  return { store, executions, deps, completed };
}

describe('a Schedule with a drill target, fired', () => {
  it('drills nothing before the Schedule has a Completed backup, and says so in its status', async () => {
    // Prepare
    const { executions, deps } = await setUp();

    // Act
    const outcome = await fireSchedule(
      { schedule: 'weekly', scheduledTime: at('2026-11-29T03:00:00Z') },
      deps,
    );

    // Assess
    expect(outcome).toEqual({
      backup: 'weekly-20261129030000',
      drillSkipped: 'schedule "weekly" has no Completed backup to drill yet',
    });
    expect(executions.started('drill')).toEqual([]);
    const status = (await getSchedule('weekly', deps)).schedule.status;
    expect(status?.lastDrillSkippedReason).toBe(outcome.drillSkipped);
  });

  it("drills the latest Completed backup into the drill's cluster, once per firing", async () => {
    // Prepare
    const drill = { cluster: 'dr', namespaceMapping: { shop: 'shop-drill' }, readyTimeout: '5m' };
    const { executions, deps, completed } = await setUp(drill);
    await fireSchedule({ schedule: 'weekly', scheduledTime: at('2026-11-29T03:00:00Z') }, deps);
    await completed('weekly-20261129030000', '2026-11-29T03:00:01Z');
    const firing = { schedule: 'weekly', scheduledTime: at('2026-12-06T03:00:00Z') };

    // Act
    const outcome = await fireSchedule(firing, deps);
    const again = await fireSchedule(firing, deps);

    // Assess: the drill request is one StartDrill accepts, of the schedule's latest backup.
    expect(outcome).toEqual({ backup: 'weekly-20261206030000', drill: 'weekly-drill-20261206030000' });
    expect(again).toEqual(outcome);
    expect(executions.started('drill')).toEqual(['weekly-drill-20261206030000']);
    const input = JSON.parse(
      (await executions.describe({ workflow: 'drill', name: outcome.drill ?? '' }))?.input ?? '{}',
    );
    const checked = validateDrillRequest(input.request);
    expect(checked).toMatchObject({
      ok: true,
      value: {
        cluster: 'dr',
        drill: {
          metadata: { name: 'weekly-drill-20261206030000' },
          spec: { backupName: 'weekly-20261129030000', ...spreadOf(drill) },
        },
      },
    });
    const status = (await getSchedule('weekly', deps)).schedule.status;
    expect(status).toMatchObject({ lastDrillName: 'weekly-drill-20261206030000' });
    expect(status?.lastDrillSkippedReason).toBeUndefined();
  });

  it('names the Schedule that fired the drill in its report and summary, started and finished', async () => {
    // Prepare: a firing's drill, as its execution's input holds it.
    const { store, executions, deps, completed } = await setUp();
    await completed('weekly-20261122030000', '2026-11-22T03:00:01Z');
    const firing = await fireSchedule(
      { schedule: 'weekly', scheduledTime: at('2026-11-29T03:00:00Z') },
      deps,
    );
    const name = firing.drill ?? '';
    const { request } = JSON.parse((await executions.describe({ workflow: 'drill', name }))?.input ?? '{}');

    // Act: the drill workflow's first and last steps.
    const started = await startDrill({ request, runId: 'r1' }, { store, clock: deps.clock });
    const inProgress = await readDrillReport(store, name);
    if (!started.valid) throw new Error(`refused: ${JSON.stringify(started)}`);
    await finishDrill({ run: started.run, restore: { phase: 'Failed' } }, { store, clock: deps.clock });
    const finished = await readDrillReport(store, name);

    // Assess: a field of its own, and the backup's schedule, both before and after.
    for (const report of [inProgress, finished])
      expect(report).toMatchObject({
        firedBySchedule: 'weekly',
        backup: { name: 'weekly-20261122030000', schedule: 'weekly' },
      });
    expect(drillSummary(finished ?? fail())).toContain('  Fired by:   schedule weekly');
  });

  it('skips the drill while the previous one runs, and drills again once it has ended', async () => {
    // Prepare
    const { executions, deps, completed } = await setUp();
    await completed('weekly-20261122030000', '2026-11-22T03:00:01Z');
    const first = await fireSchedule({ schedule: 'weekly', scheduledTime: at('2026-11-29T03:00:00Z') }, deps);
    await completed('weekly-20261129030000', '2026-11-29T03:00:01Z');

    // Act
    const whileRunning = await fireSchedule(
      { schedule: 'weekly', scheduledTime: at('2026-12-06T03:00:00Z') },
      deps,
    );
    executions.end('drill', first.drill ?? '');
    await completed('weekly-20261206030000', '2026-12-06T03:00:01Z');
    const after = await fireSchedule({ schedule: 'weekly', scheduledTime: at('2026-12-13T03:00:00Z') }, deps);

    // Assess
    expect(first.drill).toBe('weekly-drill-20261129030000');
    expect(whileRunning).toEqual({
      backup: 'weekly-20261206030000',
      drillSkipped: 'the previous drill weekly-drill-20261129030000 is still running',
    });
    expect(after.drill).toBe('weekly-drill-20261213030000');
    expect(executions.started('drill')).toEqual([first.drill, after.drill]);
  });

  it('starts no drill for a Schedule without a drill target, nor for a paused one', async () => {
    const plain = await setUp(null);
    await plain.completed('weekly-20261122030000', '2026-11-22T03:00:01Z');
    const outcome = await fireSchedule(
      { schedule: 'weekly', scheduledTime: at('2026-11-29T03:00:00Z') },
      plain.deps,
    );
    expect(outcome).toEqual({ backup: 'weekly-20261129030000' });
    expect(plain.executions.started('drill')).toEqual([]);

    const drilled = await setUp();
    await drilled.completed('weekly-20261122030000', '2026-11-22T03:00:01Z');
    await setSchedulePaused({ name: 'weekly', paused: true }, drilled.deps);
    const paused = await fireSchedule(
      { schedule: 'weekly', scheduledTime: at('2026-11-29T03:00:00Z') },
      drilled.deps,
    );
    expect(paused).toEqual({ skipped: 'schedule "weekly" is paused' });
    expect(drilled.executions.started('drill')).toEqual([]);
  });
});

function spreadOf(drill: { namespaceMapping: Record<string, string>; readyTimeout: string }) {
  return { namespaceMapping: drill.namespaceMapping, readyTimeout: drill.readyTimeout };
}

function fail(): never {
  throw new Error('no report');
}
