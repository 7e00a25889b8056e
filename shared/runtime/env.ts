/**
 * The Lambda functions' configuration, read once from the environment and checked, so a
 * misconfigured deployment fails at start with the variable named.
 */
import { z } from 'zod';

export const lambdaEnv = z.object({
  AWS_REGION: z.string().min(1),
  LIFEBOAT_BUCKET: z.string().min(1),
  LIFEBOAT_PREFIX: z.string().default(''),
  ITEM_BLOCK_QUEUE_URL: z.string().optional(),
  ITEM_BLOCKS_TIMEOUT_SECONDS: z.coerce.number().int().positive().default(3600),
  /** How long a worker runs one message's hooks; a block whose hooks could take longer goes to the hook runner. */
  LIFEBOAT_INLINE_HOOK_LIMIT_SECONDS: z.coerce.number().int().positive().default(600),
  /** The data mover repository's key (KMS key ARN): set where volumes go to or come from the data mover. */
  LIFEBOAT_REPOSITORY_KEY: z.string().min(1).optional(),
  /** S3 Object Lock on the bucket: a backup's objects are retained until its expiration, in this mode. */
  LIFEBOAT_OBJECT_LOCK_MODE: z.enum(['GOVERNANCE', 'COMPLIANCE']).optional(),
  /** Path-style S3 addressing, for S3-compatible endpoints. */
  LIFEBOAT_S3_FORCE_PATH_STYLE: z.enum(['true', 'false']).default('false'),
});
export type LambdaEnv = z.infer<typeof lambdaEnv>;

export function readEnv(source: NodeJS.ProcessEnv = process.env): LambdaEnv {
  const parsed = lambdaEnv.safeParse(source);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Lifeboat function misconfigured: ${problems}`);
  }
  return parsed.data;
}

export function requireQueueUrl(env: LambdaEnv): string {
  if (!env.ITEM_BLOCK_QUEUE_URL)
    throw new Error('Lifeboat function misconfigured: ITEM_BLOCK_QUEUE_URL is not set');
  return env.ITEM_BLOCK_QUEUE_URL;
}
