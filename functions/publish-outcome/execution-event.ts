/**
 * Step Functions' "Execution Status Change" event (EventBridge, source aws.states) as an ended
 * execution: the workflow by the state machine's name (`<stack>-backup`, `-restore`, `-delete`, `-drill`),
 * its status, input, error and cause. An event of another state machine, or one that has not
 * ended, is refused naming the field: the rule should never deliver it.
 */
import * as z from 'zod';
import type { EndedExecution } from './publish-outcome.js';

const statusChange = z.object({
  'detail-type': z.literal('Step Functions Execution Status Change'),
  detail: z.object({
    name: z.string().min(1),
    stateMachineArn: z.string().regex(/-(backup|restore|delete|drill)$/, 'is not a Lifeboat workflow'),
    status: z.enum(['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED']),
    input: z.string().nullish(),
    error: z.string().nullish(),
    cause: z.string().nullish(),
    startDate: z.number().nullish(),
    stopDate: z.number().nullish(),
  }),
});

export function endedExecution(event: unknown): EndedExecution {
  const parsed = statusChange.safeParse(event);
  if (!parsed.success)
    throw new Error(
      `not an ended Lifeboat execution: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  const d = parsed.data.detail;
  const workflow = (/-(backup|restore|delete|drill)$/.exec(d.stateMachineArn)?.[1] ??
    'backup') as EndedExecution['workflow'];
  return {
    workflow,
    executionName: d.name,
    status: d.status,
    input: d.input ?? '{}',
    ...(d.error ? { error: d.error } : {}),
    ...(d.cause ? { cause: d.cause } : {}),
    ...(d.startDate ? { startDate: new Date(d.startDate) } : {}),
    ...(d.stopDate ? { stopDate: new Date(d.stopDate) } : {}),
  };
}
