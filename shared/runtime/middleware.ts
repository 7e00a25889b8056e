/**
 * Handler glue shared by every function: middy with an early timeout, so a step ends with a
 * clear error before Lambda kills it, and the abort signal passed on to every call.
 */
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { logger } from './logger.js';

export function lambdaHandler<E, R>(
  name: string,
  useCase: (event: E, signal: AbortSignal) => Promise<R>,
): middy.MiddyfiedHandler<E, R, Error, Context> {
  return middy<E, R, Error, Context>({ timeoutEarlyInMillis: 5_000 }).handler(
    async (event, context, { signal }) => {
      logger.addContext(context);
      logger.info(`${name} started`);
      return useCase(event, signal);
    },
  );
}
