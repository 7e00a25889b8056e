/**
 * The template's EventBridge Scheduler schedule groups, created in moto by the rehearsal's deploy
 * (the API puts the Scheduler schedules of Schedules there), named as the template names them.
 */
import { CreateScheduleGroupCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { type CloudAssembly, type Physical, resourcesOf } from './template.js';

/** Names each schedule group as its template says, and creates it in moto. */
export async function createScheduleGroups(options: {
  assembly: CloudAssembly;
  target: {
    readonly endpoint: string;
    readonly region: string;
    readonly account: string;
    readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string };
  };
  physical: Map<string, Physical>;
}): Promise<void> {
  const { assembly, target, physical } = options;
  const client = new SchedulerClient({ ...target });
  for (const [id, resource] of resourcesOf(assembly.template, 'AWS::Scheduler::ScheduleGroup')) {
    const name = String(resource.Properties?.Name ?? `${assembly.stackName}-${id}`);
    await client.send(new CreateScheduleGroupCommand({ Name: name }));
    physical.set(id, {
      ref: name,
      attributes: { Arn: `arn:aws:scheduler:${target.region}:${target.account}:schedule-group/${name}` },
    });
  }
}
