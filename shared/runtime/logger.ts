/** The functions' structured logger (Powertools, JSON). Logs names and counts, never object contents. */
import { Logger } from '@aws-lambda-powertools/logger';

export const logger = new Logger({ serviceName: 'lifeboat' });
