/**
 * Lambda entry of FireSchedule: EventBridge Scheduler's target input,
 * `{"schedule": "<name>", "scheduledTime": "<aws.scheduler.scheduled-time>"}`.
 */
import { z } from 'zod';
import { sfnExecutions } from '../../shared/adapters/sfn-executions.js';
import { requireStateMachines } from '../../shared/runtime/env.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, env, store } from '../common/wiring.js';
import { fireSchedule } from './fire-schedule.js';

const input = z.object({ schedule: z.string().min(1), scheduledTime: z.iso.datetime({ offset: true }) });

const executions = sfnExecutions({ region: env.AWS_REGION, machines: requireStateMachines(env) });

export const handler = lambdaHandler('FireSchedule', async (event: unknown, signal) => {
  const { schedule, scheduledTime } = input.parse(event);
  return fireSchedule(
    { schedule, scheduledTime: new Date(scheduledTime) },
    { store, executions, clock, signal },
  );
});
