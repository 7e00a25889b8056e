/** The API's ScheduleTimer in AWS: EventBridge Scheduler in the group the stack names, if it names one. */
import { eventBridgeScheduleTimer } from '../../shared/adapters/eventbridge-scheduler.js';
import type { ScheduleTimer } from '../../shared/ports/scheduler.js';
import type { LambdaEnv } from '../../shared/runtime/env.js';

export function schedulerTimer(env: LambdaEnv): { timer?: ScheduleTimer } {
  const groupName = env.LIFEBOAT_SCHEDULE_GROUP;
  const targetArn = env.LIFEBOAT_SCHEDULE_TARGET_ARN;
  const roleArn = env.LIFEBOAT_SCHEDULER_ROLE_ARN;
  if (!groupName || !targetArn || !roleArn) return {};
  const deadLetterArn = env.LIFEBOAT_SCHEDULE_DEAD_LETTER_ARN;
  return {
    timer: eventBridgeScheduleTimer({
      region: env.AWS_REGION,
      target: { groupName, targetArn, roleArn, ...(deadLetterArn ? { deadLetterArn } : {}) },
    }),
  };
}
