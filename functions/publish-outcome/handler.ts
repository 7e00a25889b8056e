/**
 * Lambda entry of PublishOutcome: the target of the rule on Step Functions' "Execution Status
 * Change" events of the stack's state machines, for every end (succeeded, failed, timed out,
 * aborted). Publishes the Lifeboat event to EventBridge and the run's metrics (EMF).
 */
import { eventBridgeBus } from '../../shared/adapters/eventbridge-bus.js';
import { publishRunMetrics } from '../../shared/runtime/metrics.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, env, store } from '../common/wiring.js';
import { endedExecution } from './execution-event.js';
import { publishOutcome } from './publish-outcome.js';

const bus = eventBridgeBus({
  region: env.AWS_REGION,
  ...(env.LIFEBOAT_EVENT_BUS ? { busName: env.LIFEBOAT_EVENT_BUS } : {}),
});

export const handler = lambdaHandler('PublishOutcome', async (event: unknown) => {
  const ended = endedExecution(event);
  const { event: published, figures } = await publishOutcome(ended, { store, bus, clock });
  publishRunMetrics(figures);
  return { detailType: published.detailType };
});
