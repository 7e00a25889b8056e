/**
 * Schedules in AWS, through the use cases with the EventBridge Scheduler timer on moto's
 * Scheduler (which never fires): creating, pausing, unpausing and deleting a Schedule creates,
 * updates and deletes its Scheduler schedule with the expression, time zone, target and input;
 * firing is what Scheduler would do, the target's input (read back from moto) with the scheduled
 * time filled in, given to the fire-schedule use case, which starts the real backup workflow
 * (the local orchestrator, against the local cluster) under Velero's name and labels; a second
 * firing while the first backup runs is skipped and recorded in the Schedule's status.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateScheduleGroupCommand,
  GetScheduleCommand,
  ListSchedulesCommand,
  SchedulerClient,
} from '@aws-sdk/client-scheduler';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterReacher } from '../../../cli/server/clusters.js';
import { LocalExecutions } from '../../../cli/server/local-executions.js';
import { localRunners } from '../../../cli/server/runners.js';
import { backupStatus } from '../../../functions/api/backup-status.js';
import { fireSchedule } from '../../../functions/fire-schedule/fire-schedule.js';
import {
  createSchedule,
  deleteSchedule,
  getSchedule,
  type ScheduleDeps,
  setSchedulePaused,
} from '../../../functions/schedules/schedules.js';
import { EventBridgeScheduleTimer } from '../../../shared/adapters/eventbridge-scheduler.js';
import { LocalDirectoryStore } from '../../../shared/adapters/local-directory-store.js';
import { systemClock } from '../../../shared/adapters/system-clock.js';
import { awsConfig, kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';

describe('schedules on EventBridge Scheduler, through the use cases', () => {
  const groupName = uniqueName('lifeboat-schedules');
  let client: SchedulerClient;
  let root: string;
  let namespace: string;
  let deps: ScheduleDeps & { executions: LocalExecutions };
  let targetArn: string;

  beforeAll(async () => {
    const { accounts, region } = testEnv().aws;
    client = new SchedulerClient(awsConfig());
    await client.send(new CreateScheduleGroupCommand({ Name: groupName }));
    targetArn = `arn:aws:lambda:${region}:${accounts.source}:function:Lifeboat-FireSchedule`;
    const timer = new EventBridgeScheduleTimer(client, {
      groupName,
      targetArn,
      roleArn: `arn:aws:iam::${accounts.source}:role/Lifeboat-FireScheduleScheduler`,
    });
    root = await mkdtemp(join(tmpdir(), 'lifeboat-scheduler-'));
    const store = new LocalDirectoryStore(join(root, 'store'));
    const served = new Map([['source', { path: testEnv().clusters.source.kubeconfig }]]);
    const executions = new LocalExecutions(
      await localRunners({
        store,
        clusterNamed: clusterReacher(served),
        values: { 'repository-key-file': join(root, 'repository.key') },
      }),
    );
    deps = { store, timer, clock: systemClock, executions };
    namespace = uniqueName('scheduled');
    const core = kubeConfigFor(testEnv().clusters.source).makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'one' }, data: { a: 'b' } },
    });
  });

  afterAll(async () => {
    await deps?.executions.settled();
    await kubeConfigFor(testEnv().clusters.source)
      .makeApiClient(CoreV1Api)
      .deleteNamespace({ name: namespace })
      .catch(() => undefined);
    if (root) await rm(root, { recursive: true, force: true });
  });

  const schedulerSchedules = async (name: string) => {
    const { Schedules = [] } = await client.send(new ListSchedulesCommand({ GroupName: groupName }));
    const names = Schedules.map((s) => s.Name ?? '').filter((n) => n.startsWith(`${name}_`));
    return Promise.all(
      names.sort().map((n) => client.send(new GetScheduleCommand({ Name: n, GroupName: groupName }))),
    );
  };

  /** What Scheduler sends the target at a scheduled time: its input with the time filled in. */
  async function fireAsScheduler(name: string, at: Date) {
    const [member] = await schedulerSchedules(name);
    expect(member?.Target?.Arn).toBe(targetArn);
    const sent = (member?.Target?.Input ?? '').replace(
      '<aws.scheduler.scheduled-time>',
      at.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    );
    const event = JSON.parse(sent) as { schedule: string; scheduledTime: string };
    return fireSchedule({ schedule: event.schedule, scheduledTime: new Date(event.scheduledTime) }, deps);
  }

  const request = (name: string, schedule: string) => ({
    cluster: 'source',
    schedule: {
      apiVersion: 'velero.io/v1',
      kind: 'Schedule',
      metadata: { name, labels: { team: 'shop' } },
      spec: {
        schedule,
        template: { includedNamespaces: [namespace], metadata: { labels: { tier: 'gold' } } },
      },
    },
  });

  it('creates, pauses, unpauses and deletes the Scheduler schedules of a Schedule', async () => {
    const name = uniqueName('nightly');
    await createSchedule(request(name, 'CRON_TZ=America/New_York 0 2 * * *'), deps);
    const [created, ...others] = await schedulerSchedules(name);
    expect(others).toEqual([]);
    expect(created).toMatchObject({
      ScheduleExpression: 'cron(0 2 * * ? *)',
      ScheduleExpressionTimezone: 'America/New_York',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
      Target: { Arn: targetArn },
    });
    expect(JSON.parse(created?.Target?.Input ?? '')).toEqual({
      schedule: name,
      scheduledTime: '<aws.scheduler.scheduled-time>',
    });
    await setSchedulePaused({ name, paused: true }, deps);
    expect((await schedulerSchedules(name)).map((s) => s.State)).toEqual(['DISABLED']);
    await setSchedulePaused({ name, paused: false }, deps);
    expect((await schedulerSchedules(name)).map((s) => s.State)).toEqual(['ENABLED']);
    await deleteSchedule(name, deps);
    expect(await schedulerSchedules(name)).toEqual([]);
    await deleteSchedule(name, deps);
  });

  it('gives a cron restricting both days two Scheduler schedules, by day of month and by day of week', async () => {
    const name = uniqueName('both-days');
    await createSchedule(request(name, '30 4 1,15 * 5'), deps);
    const expressions = (await schedulerSchedules(name)).map((s) => s.ScheduleExpression);
    expect(expressions).toHaveLength(2);
    expect(expressions).toContain('cron(30 4 1,15 * ? *)');
    expect(expressions.some((e) => /^cron\(30 4 \? \* \S+ \*\)$/.test(e ?? ''))).toBe(true);
    await deleteSchedule(name, deps);
  });

  it('fires as Scheduler would: a backup with Velero’s name and labels, and a second firing while it runs is skipped and recorded', async () => {
    const name = uniqueName('every');
    await createSchedule(request(name, '*/5 * * * *'), deps);
    const first = new Date('2026-11-28T03:05:00Z');
    expect(await fireAsScheduler(name, first)).toEqual({ backup: `${name}-20261128030500` });
    // The same firing again (Scheduler's retry) is the same backup.
    expect(await fireAsScheduler(name, first)).toEqual({ backup: `${name}-20261128030500` });
    const second = await fireAsScheduler(name, new Date('2026-11-28T03:10:00Z'));
    expect(second).toEqual({
      skipped: expect.stringMatching(/previous backup .*-20261128030500 is still running/),
    });
    const status = (await getSchedule(name, deps)).schedule.status;
    expect(status).toMatchObject({
      phase: 'Enabled',
      lastBackup: first.toISOString(),
      lastSkipped: '2026-11-28T03:10:00.000Z',
      lastSkippedReason: 'skipped' in second ? second.skipped : '',
    });
    const backup = await waitFor('the scheduled backup to complete', async () => {
      const found = await backupStatus(`${name}-20261128030500`, deps);
      return found?.status.phase === 'Completed' ? found : undefined;
    });
    expect(backup.metadata.labels).toMatchObject({
      'velero.io/schedule-name': name,
      team: 'shop',
      tier: 'gold',
    });
    // Once it ended, the next firing makes the next backup.
    expect(await fireAsScheduler(name, new Date('2026-11-28T03:15:00Z'))).toEqual({
      backup: `${name}-20261128031500`,
    });
    await deleteSchedule(name, deps);
  });
});
