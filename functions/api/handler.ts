/** Lambda entry of the API: API Gateway's proxy event in, the answer out (api.ts routes it). */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { s3DownloadLinks } from '../../shared/adapters/s3-download-links.js';
import { sfnExecutions } from '../../shared/adapters/sfn-executions.js';
import { systemClock } from '../../shared/adapters/system-clock.js';
import { requireStateMachines } from '../../shared/runtime/env.js';
import { logger } from '../../shared/runtime/logger.js';
import { lambdaHandler } from '../../shared/runtime/middleware.js';
import { env, locations, store } from '../common/wiring.js';
import { handleApiRequest } from './api.js';
import { schedulerTimer } from './scheduler-timer.js';

const executions = sfnExecutions({
  region: env.AWS_REGION,
  // A stack deployed without the drill workflow has none to start (its StartExecution fails).
  machines: { ...requireStateMachines(env), drill: env.LIFEBOAT_DRILL_STATE_MACHINE_ARN ?? '' },
});
const links = s3DownloadLinks({
  region: env.AWS_REGION,
  bucket: env.LIFEBOAT_BUCKET,
  prefix: env.LIFEBOAT_PREFIX,
  forcePathStyle: env.LIFEBOAT_S3_FORCE_PATH_STYLE === 'true',
});
const timer = { clock: systemClock, ...schedulerTimer(env) };
const clusters = env.LIFEBOAT_CLUSTERS.split(',').filter(Boolean);
// The error's name and message only: a request's body (a Secret's data) is never logged.
const onError = (error: unknown) =>
  logger.error('request failed', {
    error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
  });

export const handler = lambdaHandler('Api', async (event: APIGatewayProxyEvent, signal) =>
  handleApiRequest(event, { store, locations, executions, links, clusters, signal, onError, ...timer }),
);
