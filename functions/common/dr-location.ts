/**
 * The DR source location of a DR deployment (LIFEBOAT_DR_SOURCE_*): the production
 * deployment's bucket, or its replica, reached in its own region, read only, as backup location
 * `dr`. Undefined in a deployment that names none. Never written.
 */
import { s3ReadOnlyLocation } from '../../shared/adapters/s3-location.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import type { LambdaEnv } from '../../shared/runtime/env.js';

/** The name under which the DR source location is listed (`backup get --location dr`). */
export const DR_LOCATION = 'dr';

export function drSourceLocation(env: LambdaEnv): ObjectStore | undefined {
  if (!env.LIFEBOAT_DR_SOURCE_BUCKET) return undefined;
  return s3ReadOnlyLocation({
    name: DR_LOCATION,
    region: env.LIFEBOAT_DR_SOURCE_REGION ?? env.AWS_REGION,
    bucket: env.LIFEBOAT_DR_SOURCE_BUCKET,
    prefix: env.LIFEBOAT_DR_SOURCE_PREFIX,
    forcePathStyle: env.LIFEBOAT_S3_FORCE_PATH_STYLE === 'true',
  });
}
