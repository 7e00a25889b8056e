import { describe, expect, it } from 'vitest';
import { restoreRepositoryOf } from '../../../../functions/common/restore-repository.js';
import { keyRegionOf } from '../../../../shared/adapters/data-mover-adapters.js';
import { readEnv } from '../../../../shared/runtime/env.js';

const own = {
  AWS_REGION: 'us-west-2',
  LIFEBOAT_BUCKET: 'dr-backups',
  LIFEBOAT_PREFIX: 'velero',
  LIFEBOAT_REPOSITORY_KEY: 'arn:aws:kms:us-west-2:210987654321:key/dr',
};
const sourceKey = 'arn:aws:kms:us-east-1:123456789012:key/source';

describe('the repository restore jobs read', () => {
  it("is the deployment's own, working data beside it, outside a DR deployment", () => {
    // Act
    const location = restoreRepositoryOf(readEnv(own));

    // Assess
    expect(location).toEqual({
      repository: {
        bucket: 'dr-backups',
        prefix: 'velero',
        region: 'us-west-2',
        kmsKeyId: own.LIFEBOAT_REPOSITORY_KEY,
      },
    });
  });

  it("is the DR source's, with its key and region, working data in the deployment's own bucket", () => {
    // Act
    const location = restoreRepositoryOf(
      readEnv({
        ...own,
        LIFEBOAT_DR_SOURCE_BUCKET: 'source-backups',
        LIFEBOAT_DR_SOURCE_PREFIX: 'prod',
        LIFEBOAT_DR_SOURCE_REGION: 'us-east-1',
        LIFEBOAT_DR_SOURCE_REPOSITORY_KEY: sourceKey,
      }),
    );

    // Assess
    expect(location).toEqual({
      repository: { bucket: 'source-backups', prefix: 'prod', region: 'us-east-1', kmsKeyId: sourceKey },
      work: { bucket: 'dr-backups', prefix: 'velero', region: 'us-west-2' },
    });
  });

  it('is none without a data mover', () => {
    // Act, Assess
    expect(restoreRepositoryOf(readEnv({ ...own, LIFEBOAT_REPOSITORY_KEY: undefined }))).toBeUndefined();
  });

  it("unwraps a key given by ARN in the key's own region (a replica elsewhere)", () => {
    // Act, Assess
    expect(keyRegionOf(sourceKey)).toBe('us-east-1');
    expect(keyRegionOf('alias/lifeboat')).toBeUndefined();
  });
});
