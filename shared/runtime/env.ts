/**
 * The Lambda functions' configuration, read once from the environment and checked, so a
 * misconfigured deployment fails at start with the variable named.
 */
import * as z from 'zod';

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
  /** The API's state machines, one per workflow (the API function only). */
  LIFEBOAT_BACKUP_STATE_MACHINE_ARN: z.string().min(1).optional(),
  LIFEBOAT_RESTORE_STATE_MACHINE_ARN: z.string().min(1).optional(),
  LIFEBOAT_DELETE_STATE_MACHINE_ARN: z.string().min(1).optional(),
  /** The DR drill workflow (the API function only; unset where the stack has no drills). */
  LIFEBOAT_DRILL_STATE_MACHINE_ARN: z.string().min(1).optional(),
  /** The clusters this deployment serves, comma-separated (the API function only). */
  LIFEBOAT_CLUSTERS: z.string().default(''),
  /** The EventBridge bus that receives Lifeboat's events (default: the account's default bus). */
  LIFEBOAT_EVENT_BUS: z.string().min(1).optional(),
  /** A DR deployment's source location (the source bucket or its replica): read only, as location `dr`. */
  LIFEBOAT_DR_SOURCE_BUCKET: z.string().min(1).optional(),
  LIFEBOAT_DR_SOURCE_PREFIX: z.string().default(''),
  LIFEBOAT_DR_SOURCE_REGION: z.string().min(1).optional(),
  /** The DR source's data-mover repository key (ARN): restores read its repository, read only. */
  LIFEBOAT_DR_SOURCE_REPOSITORY_KEY: z.string().min(1).optional(),
  /** Schedules on EventBridge Scheduler (the API function only): the group, FireSchedule, its role, dead letters. */
  LIFEBOAT_SCHEDULE_GROUP: z.string().min(1).optional(),
  LIFEBOAT_SCHEDULE_TARGET_ARN: z.string().min(1).optional(),
  LIFEBOAT_SCHEDULER_ROLE_ARN: z.string().min(1).optional(),
  LIFEBOAT_SCHEDULE_DEAD_LETTER_ARN: z.string().min(1).optional(),
  /**
   * A DR deployment's own account (set with the DR source): its restores' volumes land there, in
   * AWS_REGION, from the snapshot copies made for it.
   */
  LIFEBOAT_DEPLOYMENT_ACCOUNT: z.string().min(1).optional(),
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

/** The state machines the API starts, each named by its variable when missing. */
export function requireStateMachines(env: LambdaEnv): Record<'backup' | 'restore' | 'delete', string> {
  const machines = {
    backup: env.LIFEBOAT_BACKUP_STATE_MACHINE_ARN,
    restore: env.LIFEBOAT_RESTORE_STATE_MACHINE_ARN,
    delete: env.LIFEBOAT_DELETE_STATE_MACHINE_ARN,
  };
  const missing = Object.entries(machines).filter(([, arn]) => !arn);
  if (missing.length > 0)
    throw new Error(
      `Lifeboat function misconfigured: ${missing.map(([w]) => `LIFEBOAT_${w.toUpperCase()}_STATE_MACHINE_ARN`).join(', ')} not set`,
    );
  return machines as Record<'backup' | 'restore' | 'delete', string>;
}
