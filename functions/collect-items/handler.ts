/** Lambda entry of CollectItems (invoked with a task token; the workers complete the wait). */
import { collectItemsInput } from '../../shared/contracts/backup-run.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { callbacks, clock, clusterNamed, queue, renewRun, store } from '../common/wiring.js';
import { collectItems } from './collect-items.js';

export const handler = lambdaHandler('CollectItems', async (event: unknown, signal) => {
  const input = collectItemsInput.parse(event);
  await renewRun('backup', input.run, signal);
  const cluster = await clusterNamed(input.run.cluster);
  return collectItems(input, { cluster, store, queue: queue(), callbacks, clock, signal });
});
