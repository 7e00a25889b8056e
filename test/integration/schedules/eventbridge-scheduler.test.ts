/**
 * The ScheduleTimer on EventBridge Scheduler, against moto's Scheduler: a Schedule's expressions
 * become Scheduler schedules in the group with the expression, time zone, no flexible window, the
 * fire-schedule target, its role, retry policy, dead letters and the input Scheduler sends;
 * pausing disables them, fewer expressions drop the extra ones, removing deletes all, and a second
 * put or remove changes nothing.
 */
import {
  CreateScheduleGroupCommand,
  GetScheduleCommand,
  ListSchedulesCommand,
  SchedulerClient,
} from '@aws-sdk/client-scheduler';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  EventBridgeScheduleTimer,
  schedulerScheduleName,
} from '../../../shared/adapters/eventbridge-scheduler.js';
import { awsConfig, testEnv, uniqueName } from '../support/env.js';

describe('the EventBridge Scheduler timer', () => {
  let client: SchedulerClient;
  let timer: EventBridgeScheduleTimer;
  const groupName = uniqueName('lifeboat-schedules');
  let target: { targetArn: string; roleArn: string; deadLetterArn: string };

  beforeAll(async () => {
    const { accounts, region } = testEnv().aws;
    client = new SchedulerClient(awsConfig());
    await client.send(new CreateScheduleGroupCommand({ Name: groupName }));
    target = {
      targetArn: `arn:aws:lambda:${region}:${accounts.source}:function:Lifeboat-FireSchedule`,
      roleArn: `arn:aws:iam::${accounts.source}:role/Lifeboat-Scheduler`,
      deadLetterArn: `arn:aws:sqs:${region}:${accounts.source}:Lifeboat-ScheduleDeadLetters`,
    };
    timer = new EventBridgeScheduleTimer(client, { groupName, ...target });
  });

  async function membersOf(name: string): Promise<string[]> {
    const { Schedules = [] } = await client.send(new ListSchedulesCommand({ GroupName: groupName }));
    return Schedules.map((s) => s.Name ?? '')
      .filter((n) => n.startsWith(`${name}_`))
      .sort();
  }

  const get = (name: string) => client.send(new GetScheduleCommand({ Name: name, GroupName: groupName }));

  it('creates one Scheduler schedule per expression, with its time zone, the target and the input Scheduler sends', async () => {
    const name = uniqueName('nightly');
    await timer.put({
      name,
      expressions: [
        { expression: 'cron(0 2 ? * * *)', timezone: 'America/New_York' },
        { expression: 'cron(30 4 1 * ? *)', timezone: 'America/New_York' },
      ],
      enabled: true,
    });
    expect(await membersOf(name)).toEqual([`${name}_0`, `${name}_1`]);
    const first = await get(`${name}_0`);
    expect(first).toMatchObject({
      GroupName: groupName,
      ScheduleExpression: 'cron(0 2 ? * * *)',
      ScheduleExpressionTimezone: 'America/New_York',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
      Target: {
        Arn: target.targetArn,
        RoleArn: target.roleArn,
        DeadLetterConfig: { Arn: target.deadLetterArn },
        RetryPolicy: { MaximumEventAgeInSeconds: 3600, MaximumRetryAttempts: 10 },
      },
    });
    expect(JSON.parse(first.Target?.Input ?? '')).toEqual({
      schedule: name,
      scheduledTime: '<aws.scheduler.scheduled-time>',
    });
    expect((await get(`${name}_1`)).ScheduleExpression).toBe('cron(30 4 1 * ? *)');
  });

  it('pauses and unpauses by the schedules’ state, and drops the expressions a new put no longer has', async () => {
    const name = uniqueName('hourly');
    const expressions = [
      { expression: 'cron(0 * ? * MON-FRI *)', timezone: 'UTC' },
      { expression: 'cron(0 * 13 * ? *)', timezone: 'UTC' },
    ];
    await timer.put({ name, expressions, enabled: true });
    await timer.put({ name, expressions, enabled: false });
    expect((await get(`${name}_0`)).State).toBe('DISABLED');
    expect((await get(`${name}_1`)).State).toBe('DISABLED');
    await timer.put({
      name,
      expressions: [{ expression: 'rate(36 hours)', timezone: 'UTC' }],
      enabled: true,
    });
    expect(await membersOf(name)).toEqual([`${name}_0`]);
    expect(await get(`${name}_0`)).toMatchObject({ ScheduleExpression: 'rate(36 hours)', State: 'ENABLED' });
  });

  it('removes every schedule of a Schedule, and removing again (or what never was) is fine', async () => {
    const name = uniqueName('weekly');
    const other = `${name}-1`;
    await timer.put({
      name,
      expressions: [{ expression: 'cron(0 3 ? * SUN *)', timezone: 'UTC' }],
      enabled: true,
    });
    // A Schedule whose name extends this one's keeps its own schedule.
    await timer.put({
      name: other,
      expressions: [{ expression: 'rate(1 hours)', timezone: 'UTC' }],
      enabled: true,
    });
    await timer.remove({ name });
    expect(await membersOf(name)).toEqual([]);
    expect(await membersOf(other)).toEqual([`${other}_0`]);
    await timer.remove({ name });
    await timer.remove({ name: uniqueName('never') });
    expect(await membersOf(other)).toEqual([`${other}_0`]);
  });

  it('keeps a long name within Scheduler’s 64 characters, distinct from its neighbours', async () => {
    const long = `${'a'.repeat(50)}.${uniqueName('b').repeat(3)}`;
    const sibling = `${long}x`;
    for (const name of [long, sibling])
      await timer.put({
        name,
        expressions: [{ expression: 'rate(5 minutes)', timezone: 'UTC' }],
        enabled: true,
      });
    const names = [schedulerScheduleName(long, 0), schedulerScheduleName(sibling, 0)];
    expect(new Set(names).size).toBe(2);
    for (const n of names) {
      expect(n.length).toBeLessThanOrEqual(64);
      expect(JSON.parse((await get(n)).Target?.Input ?? '').schedule).toMatch(/^a{50}\./);
    }
    await timer.remove({ name: long });
    await expect(get(names[0] ?? '')).rejects.toThrow(/not found|does not exist/i);
    expect((await get(names[1] ?? '')).Name).toBe(names[1]);
  });
});
