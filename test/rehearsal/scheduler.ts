/**
 * EventBridge Scheduler, for the rehearsal: a schedule's target is invoked as
 * Scheduler invokes it, which moto never does: with the schedule's execution role (its
 * lambda:InvokeFunction on the target evaluated like every other call) and the target's input
 * with `<aws.scheduler.scheduled-time>` filled in.
 */
import type { IamPolicies } from './iam.js';
import type { InvocationResult, LambdaService } from './lambda.js';
import { type CloudAssembly, type Json, type Resolver, resolve, resourcesOf } from './template.js';

/** A Scheduler target: the function, the role Scheduler assumes, the input it sends. */
export interface SchedulerTarget {
  readonly arn: string;
  readonly roleArn: string;
  readonly input: string;
}

/** The targets of the template's own Scheduler schedules (the GC schedule), by schedule name. */
export function templateScheduleTargets(options: {
  assembly: CloudAssembly;
  resolver: Resolver;
}): Map<string, SchedulerTarget> {
  const targets = new Map<string, SchedulerTarget>();
  for (const [id, resource] of resourcesOf(options.assembly.template, 'AWS::Scheduler::Schedule')) {
    const props = (resource.Properties ?? {}) as Record<string, Json>;
    const target = resolve(options.resolver, props.Target ?? null) as {
      Arn: string;
      RoleArn: string;
      Input?: string;
    };
    targets.set(String(props.Name ?? id), {
      arn: target.Arn,
      roleArn: target.RoleArn,
      input: target.Input ?? '{}',
    });
  }
  return targets;
}

/** Invokes a target as Scheduler does at a scheduled time; a role that may not invoke it is refused. */
export async function invokeAsScheduler(options: {
  target: SchedulerTarget;
  scheduledTime: Date;
  iam: IamPolicies;
  lambda: LambdaService;
}): Promise<InvocationResult> {
  const { target, iam, lambda } = options;
  const decision = await iam.evaluate({
    principal: target.roleArn,
    action: 'lambda:InvokeFunction',
    resources: [target.arn],
    caller: 'EventBridge Scheduler',
  });
  if (!decision.allowed)
    return { ok: false, error: { errorType: 'AccessDeniedException', errorMessage: decision.detail } };
  const time = options.scheduledTime.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const input = target.input.replaceAll('<aws.scheduler.scheduled-time>', time);
  return lambda.invoke(target.arn, JSON.parse(input) as Json);
}
