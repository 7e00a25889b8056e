/**
 * Lambda entry of CollectGarbage: the GC schedule's target input, `{"dryRun": false}` (or
 * nothing); answers the report, which it also writes to the store.
 */
import * as z from 'zod';
import { sfnExecutions } from '../../shared/adapters/sfn-executions.js';
import { requireStateMachines } from '../../shared/runtime/env.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { clock, env, store } from '../common/wiring.js';
import { collectGarbage } from './collect-garbage.js';

const input = z.object({ dryRun: z.boolean().default(false) }).default({ dryRun: false });

// It never starts a drill: its role may not, and it has no drill workflow to name.
const executions = sfnExecutions({
  region: env.AWS_REGION,
  machines: { ...requireStateMachines(env), drill: '' },
});

export const handler = lambdaHandler('CollectGarbage', async (event: unknown, signal) =>
  collectGarbage(input.parse(event ?? {}), { store, executions, clock, signal }),
);
