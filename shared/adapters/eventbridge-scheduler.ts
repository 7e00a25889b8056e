/**
 * The ScheduleTimer on EventBridge Scheduler: a Lifeboat Schedule becomes one Scheduler schedule
 * per expression (schedulerExpressions gives several when AWS cron cannot say the cron alone), in
 * the stack's schedule group, named after the Schedule (schedulerScheduleNames), with no flexible
 * window, ENABLED or DISABLED as the Schedule is paused, whose target is the fire-schedule
 * function with `{"schedule":"<name>","scheduledTime":"<aws.scheduler.scheduled-time>"}`.
 * Put is create-or-update and drops members a previous put made that the new one does not need;
 * remove drops every member and is fine with none. Never starts a backup, never reads the store.
 */
import { createHash } from 'node:crypto';
import {
  ConflictException,
  CreateScheduleCommand,
  type CreateScheduleCommandInput,
  DeleteScheduleCommand,
  ListSchedulesCommand,
  ResourceNotFoundException,
  SchedulerClient,
  SchedulerServiceException,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import type { ScheduleTimer } from '../ports/scheduler.js';
import { awsErrorOf } from './aws-errors.js';

const RETRYABLE = new Set([
  'ThrottlingException',
  'InternalServerException',
  'ServiceQuotaExceededException',
]);

/** Scheduler's limit on a schedule's name ([0-9a-zA-Z-_.]{1,64}). */
const NAME_LIMIT = 64;
/** Members a Schedule may have (schedulerExpressions gives at most a handful). */
const MEMBER_LIMIT = 100;

/** Where a Schedule's Scheduler schedules go and what they invoke. */
export interface SchedulerTarget {
  /** The stack's schedule group. */
  readonly groupName: string;
  /** The fire-schedule function's ARN. */
  readonly targetArn: string;
  /** The role Scheduler invokes the target with (it may invoke only the target). */
  readonly roleArn: string;
  /** An SQS queue for the invocations Scheduler could not deliver. */
  readonly deadLetterArn?: string;
  /**
   * How long Scheduler keeps retrying an invocation it could not deliver (default one hour: an
   * older trigger goes to the dead letters, as Velero never catches up missed runs).
   */
  readonly maximumEventAgeSeconds?: number;
  readonly maximumRetryAttempts?: number;
}

/**
 * The Scheduler names of a Schedule's members: `<name>_<i>`, where `_` never occurs in a
 * Kubernetes name, so no two Schedules share a member; a name too long for Scheduler's 64
 * characters keeps its first 43 and a digest of the whole (`<43>_<12 hex>_<i>`).
 */
export function schedulerScheduleBase(name: string): string {
  // `_<i>` adds at most three characters (MEMBER_LIMIT).
  if (name.length + 3 <= NAME_LIMIT) return name;
  const digest = createHash('sha256').update(name).digest('hex').slice(0, 12);
  return `${name.slice(0, 43)}_${digest}`;
}

export function schedulerScheduleName(name: string, index: number): string {
  return `${schedulerScheduleBase(name)}_${index}`;
}

/** The target input Scheduler sends: the Schedule's name and the fire's scheduled time. */
export function fireInput(name: string): string {
  return `{"schedule":${JSON.stringify(name)},"scheduledTime":"<aws.scheduler.scheduled-time>"}`;
}

export class EventBridgeScheduleTimer implements ScheduleTimer {
  constructor(
    private readonly client: SchedulerClient,
    private readonly target: SchedulerTarget,
  ) {}

  async put(options: {
    name: string;
    expressions: readonly { expression: string; timezone: string }[];
    enabled: boolean;
    signal?: AbortSignal;
  }): Promise<void> {
    const { name, expressions, signal } = options;
    if (expressions.length === 0 || expressions.length > MEMBER_LIMIT)
      throw new RangeError(`a schedule needs 1 to ${MEMBER_LIMIT} expressions, not ${expressions.length}`);
    for (const [index, expression] of expressions.entries()) {
      const input = this.scheduleInput({
        name,
        index,
        count: expressions.length,
        expression: expression.expression,
        timezone: expression.timezone,
        enabled: options.enabled,
      });
      await this.createOrUpdate(input, signal);
    }
    const kept = new Set(expressions.map((_, i) => schedulerScheduleName(name, i)));
    for (const member of await this.members(name, signal))
      if (!kept.has(member)) await this.deleteMember(member, signal);
  }

  async remove(options: { name: string; signal?: AbortSignal }): Promise<void> {
    for (const member of await this.members(options.name, options.signal))
      await this.deleteMember(member, options.signal);
  }

  private scheduleInput(options: {
    name: string;
    index: number;
    count: number;
    expression: string;
    timezone: string;
    enabled: boolean;
  }): CreateScheduleCommandInput {
    const { target } = this;
    return {
      Name: schedulerScheduleName(options.name, options.index),
      GroupName: target.groupName,
      Description: `Lifeboat schedule ${options.name} (${options.index + 1} of ${options.count})`,
      ScheduleExpression: options.expression,
      ScheduleExpressionTimezone: options.timezone,
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: options.enabled ? 'ENABLED' : 'DISABLED',
      Target: {
        Arn: target.targetArn,
        RoleArn: target.roleArn,
        Input: fireInput(options.name),
        RetryPolicy: {
          MaximumEventAgeInSeconds: target.maximumEventAgeSeconds ?? 3600,
          MaximumRetryAttempts: target.maximumRetryAttempts ?? 10,
        },
        ...(target.deadLetterArn ? { DeadLetterConfig: { Arn: target.deadLetterArn } } : {}),
      },
    };
  }

  /** Update first (pause and unpause are the common case); create what is not there yet. */
  private async createOrUpdate(input: CreateScheduleCommandInput, signal?: AbortSignal): Promise<void> {
    const options = signal ? { abortSignal: signal } : {};
    const what = `schedule ${input.Name} in group ${input.GroupName}`;
    try {
      await this.client.send(new UpdateScheduleCommand(input), options);
      return;
    } catch (error) {
      if (!(error instanceof ResourceNotFoundException))
        throw this.failure(error, `UpdateSchedule ${what}`, signal);
    }
    try {
      await this.client.send(new CreateScheduleCommand(input), options);
    } catch (error) {
      // Created meanwhile by a concurrent put: make it what this put says.
      if (!(error instanceof ConflictException)) throw this.failure(error, `CreateSchedule ${what}`, signal);
      try {
        await this.client.send(new UpdateScheduleCommand(input), options);
      } catch (again) {
        throw this.failure(again, `UpdateSchedule ${what}`, signal);
      }
    }
  }

  /** The Scheduler schedules of the group that belong to this Schedule. */
  private async members(name: string, signal?: AbortSignal): Promise<string[]> {
    const base = schedulerScheduleBase(name);
    const member = new RegExp(`^${base.replace(/\./g, '\\.')}_\\d+$`);
    const found: string[] = [];
    let token: string | undefined;
    do {
      try {
        const page = await this.client.send(
          new ListSchedulesCommand({
            GroupName: this.target.groupName,
            NamePrefix: `${base}_`,
            ...(token ? { NextToken: token } : {}),
          }),
          signal ? { abortSignal: signal } : {},
        );
        for (const s of page.Schedules ?? []) if (s.Name && member.test(s.Name)) found.push(s.Name);
        token = page.NextToken;
      } catch (error) {
        if (error instanceof ResourceNotFoundException) return [];
        throw this.failure(error, `ListSchedules ${base}_ in group ${this.target.groupName}`, signal);
      }
    } while (token);
    return found;
  }

  private async deleteMember(member: string, signal?: AbortSignal): Promise<void> {
    try {
      await this.client.send(
        new DeleteScheduleCommand({ Name: member, GroupName: this.target.groupName }),
        signal ? { abortSignal: signal } : {},
      );
    } catch (error) {
      if (error instanceof ResourceNotFoundException) return;
      throw this.failure(error, `DeleteSchedule ${member} in group ${this.target.groupName}`, signal);
    }
  }

  private failure(error: unknown, what: string, signal?: AbortSignal): unknown {
    return awsErrorOf(error, { what, signal, service: SchedulerServiceException, retryableCodes: RETRYABLE });
  }
}

/** The timer in a region, with the SDK's retries of throttling and 5xx. */
export function eventBridgeScheduleTimer(options: {
  region: string;
  target: SchedulerTarget;
}): EventBridgeScheduleTimer {
  return new EventBridgeScheduleTimer(
    new SchedulerClient({ region: options.region, maxAttempts: 8 }),
    options.target,
  );
}
