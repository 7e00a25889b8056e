/**
 * The data mover's repository as restore jobs name it. In a DR deployment (LIFEBOAT_DR_SOURCE_*
 * with the source's repository key) that is the source's repository, read only, in its own
 * bucket, prefix and region, while the jobs' working data (progress, results) goes to the
 * deployment's own bucket; elsewhere the deployment's own repository, working data beside it.
 */
import type { RepositoryLocation, WorkLocation } from '../../shared/contracts/data-mover-job.js';
import type { LambdaEnv } from '../../shared/runtime/env.js';

export interface RestoreRepository {
  readonly repository: RepositoryLocation;
  readonly work?: WorkLocation;
}

/** Undefined where the deployment has no data mover (no repository key of its own). */
export function restoreRepositoryOf(env: LambdaEnv): RestoreRepository | undefined {
  if (!env.LIFEBOAT_REPOSITORY_KEY) return undefined;
  const own = {
    bucket: env.LIFEBOAT_BUCKET,
    ...(env.LIFEBOAT_PREFIX ? { prefix: env.LIFEBOAT_PREFIX } : {}),
    region: env.AWS_REGION,
  };
  if (!env.LIFEBOAT_DR_SOURCE_BUCKET || !env.LIFEBOAT_DR_SOURCE_REPOSITORY_KEY)
    return { repository: { ...own, kmsKeyId: env.LIFEBOAT_REPOSITORY_KEY } };
  return {
    repository: {
      bucket: env.LIFEBOAT_DR_SOURCE_BUCKET,
      ...(env.LIFEBOAT_DR_SOURCE_PREFIX ? { prefix: env.LIFEBOAT_DR_SOURCE_PREFIX } : {}),
      region: env.LIFEBOAT_DR_SOURCE_REGION ?? env.AWS_REGION,
      kmsKeyId: env.LIFEBOAT_DR_SOURCE_REPOSITORY_KEY,
    },
    work: own,
  };
}
