/**
 * Lambda entry of FireSchedule: EventBridge Scheduler's target input,
 * `{"schedule": "<name>", "scheduledTime": "<aws.scheduler.scheduled-time>"}`.
 */
import * as z from 'zod';
import { sfnExecutions } from '../../shared/adapters/sfn-executions.js';
import { requireStateMachines } from '../../shared/runtime/env.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, env, store } from '../common/wiring.js';
import { fireSchedule } from './fire-schedule.js';

const input = z.object({ schedule: z.string().min(1), scheduledTime: z.iso.datetime({ offset: true }) });

// A Schedule's drill target starts the drill workflow; a stack without one has none to start.
const executions = sfnExecutions({
  region: env.AWS_REGION,
  machines: { ...requireStateMachines(env), drill: env.LIFEBOAT_DRILL_STATE_MACHINE_ARN ?? '' },
});

export const handler = lambdaHandler('FireSchedule', async (event: unknown, signal) => {
  const { schedule, scheduledTime } = input.parse(event);
  return fireSchedule(
    { schedule, scheduledTime: new Date(scheduledTime) },
    { store, executions, clock, signal },
  );
});
