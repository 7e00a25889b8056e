/**
 * EventBridge rules, for the rehearsal: each rule of the template on Step Functions' "Execution
 * Status Change" events is matched against every execution's end as EventBridge would deliver it
 * (its event pattern: each field's list of values, nested objects matched field by field), and
 * its Lambda targets are invoked with the event (lambda.ts), each only if the template gives
 * EventBridge the right to invoke it (an AWS::Lambda::Permission for events.amazonaws.com from
 * that rule). A target that fails, or may not be invoked, is reported.
 */
import { randomUUID } from 'node:crypto';
import type { Deployment } from './deploy.js';
import type { LambdaService } from './lambda.js';
import type { ExecutionRecord } from './state-machines.js';
import { type Json, resolve, resolveString, resourcesOf } from './template.js';

interface DeployedRule {
  readonly id: string;
  readonly pattern: Json;
  readonly targets: readonly string[];
}

/** EventBridge's matching: a list is the values a field may have; an object matches field by field. */
export function matches(pattern: Json, event: Json): boolean {
  if (Array.isArray(pattern)) return pattern.some((p) => JSON.stringify(p) === JSON.stringify(event));
  if (pattern === null || typeof pattern !== 'object') return pattern === event;
  if (event === null || typeof event !== 'object' || Array.isArray(event)) return false;
  return Object.entries(pattern).every(
    ([k, p]) => k in event && matches(p, (event as Record<string, Json>)[k] ?? null),
  );
}

export class EventRules {
  private readonly rules: DeployedRule[];
  /** Targets that failed or could not be invoked. */
  readonly errors: string[] = [];

  constructor(private readonly options: { deployment: Deployment; lambda: LambdaService }) {
    const { resolver, assembly } = options.deployment;
    const permitted = new Set(
      resourcesOf(assembly.template, 'AWS::Lambda::Permission')
        .map(([, r]) => r.Properties ?? {})
        .filter((p) => p.Principal === 'events.amazonaws.com')
        .map(
          (p) => `${resolveString(resolver, p.FunctionName ?? null)} ${JSON.stringify(p.SourceArn ?? null)}`,
        ),
    );
    this.rules = resourcesOf(assembly.template, 'AWS::Events::Rule').map(([id, r]) => {
      const p = r.Properties ?? {};
      const targets = ((p.Targets ?? []) as { Arn: Json }[]).map((t) => resolveString(resolver, t.Arn));
      for (const target of targets)
        if (!permitted.has(`${target} ${JSON.stringify({ 'Fn::GetAtt': [id, 'Arn'] })}`))
          this.errors.push(`rule ${id} may not invoke ${target}: no permission for events.amazonaws.com`);
      return { id, pattern: resolve(resolver, p.EventPattern ?? null), targets };
    });
  }

  /** Delivers an execution's end to every rule it matches, and waits for their targets. */
  async executionEnded(execution: ExecutionRecord): Promise<void> {
    const { target } = this.options.deployment;
    const event: Json = {
      version: '0',
      id: randomUUID(),
      'detail-type': 'Step Functions Execution Status Change',
      source: 'aws.states',
      account: target.account,
      time: new Date().toISOString(),
      region: target.region,
      resources: [execution.executionArn],
      detail: {
        executionArn: execution.executionArn,
        stateMachineArn: execution.stateMachineArn,
        name: execution.name,
        status: execution.status,
        startDate: execution.startDate.getTime(),
        stopDate: execution.stopDate?.getTime() ?? null,
        input: execution.input,
        output: execution.output ?? null,
        error: execution.error ?? null,
        cause: execution.cause ?? null,
      },
    };
    for (const rule of this.rules.filter((r) => matches(r.pattern, event)))
      for (const fn of rule.targets) {
        const result = await this.options.lambda.invoke(fn, event);
        if (!result.ok)
          this.errors.push(`${rule.id} → ${fn}: ${result.error.errorType}: ${result.error.errorMessage}`);
      }
  }
}
