/**
 * A DR deployment's restore from the source's repository: the data mover process backs a tree
 * up into the source bucket (its repository, KMS-wrapped), then a file-restore job naming that
 * repository and a work location in the DR bucket restores it. The restore reads the source
 * only: no object of the source bucket is added, changed or removed, and its progress and
 * result are in the DR bucket.
 */
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { finalProgressOf, startDataMoverProcess } from '../../../cli/local/data-mover-process.js';
import { S3ObjectStore } from '../../../shared/adapters/s3-object-store.js';
import { DATA_MOVER_EXIT, dataMoverProgress } from '../../../shared/contracts/data-mover-job.js';
import { dataMoverWorkKeys } from '../../../shared/domain/storage/keys.js';
import { awsConfig, testEnv, uniqueName } from '../support/env.js';

describe('a data-mover restore in a DR deployment', () => {
  let sourceBucket: string;
  let drBucket: string;
  let kmsKeyId: string;
  let environment: Record<string, string>;
  const region = (): string => testEnv().aws.region;
  const storeOf = (bucket: string, prefix: string): S3ObjectStore =>
    new S3ObjectStore({ client: new S3Client({ ...awsConfig(), maxAttempts: 8 }), bucket, prefix });

  beforeAll(async () => {
    const env = testEnv();
    const s3 = new S3Client(awsConfig());
    sourceBucket = uniqueName('dr-source');
    drBucket = uniqueName('dr-own');
    await s3.send(new CreateBucketCommand({ Bucket: sourceBucket }));
    await s3.send(new CreateBucketCommand({ Bucket: drBucket }));
    const key = await new KMSClient(awsConfig()).send(
      new CreateKeyCommand({ Description: 'source repository' }),
    );
    kmsKeyId = key.KeyMetadata?.Arn ?? '';
    environment = {
      AWS_REGION: env.aws.region,
      AWS_ENDPOINT_URL: env.aws.endpoint,
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      LIFEBOAT_S3_FORCE_PATH_STYLE: 'true',
    };
  }, 120_000);

  it("reads the source's repository only and reports in the DR bucket", async () => {
    // Prepare: a tree backed up into the source's repository
    const dir = await mkdtemp(join(tmpdir(), 'lb-dr-repo-'));
    const tree = join(dir, 'tree');
    await mkdir(join(tree, 'orders'), { recursive: true });
    await writeFile(join(tree, 'orders', 'a.json'), '{"order":1}\n');
    await writeFile(join(tree, 'notes.txt'), 'kept in the source account\n');
    const repository = { bucket: sourceBucket, prefix: 'prod', region: region(), kmsKeyId };
    const backup = await startDataMoverProcess({
      job: { kind: 'file-backup', jobId: 'nightly-shop-data', repository, source: { path: tree } },
      environment,
    }).exited;
    expect(backup.code, backup.stderr).toBe(DATA_MOVER_EXIT.completed);
    const source = storeOf(sourceBucket, 'prod');
    const before = await source.list('');
    const target = join(dir, 'restored');
    await mkdir(target);

    // Act
    const restore = await startDataMoverProcess({
      job: {
        kind: 'file-restore',
        jobId: 'dr-1-shop-data',
        repository,
        work: { bucket: drBucket, prefix: 'dr', region: region() },
        manifestId: 'nightly-shop-data',
        tags: { restore: 'dr-1' },
        target: { path: target },
      },
      environment,
    }).exited;

    // Assess: restored, the source untouched, the progress in the DR bucket only
    expect(restore.code, restore.stderr).toBe(DATA_MOVER_EXIT.completed);
    expect(await readFile(join(target, 'orders', 'a.json'), 'utf8')).toBe('{"order":1}\n');
    expect(await readFile(join(target, 'notes.txt'), 'utf8')).toBe('kept in the source account\n');
    expect(await source.list('')).toEqual(before);
    const keys = dataMoverWorkKeys('dr-1-shop-data');
    expect(await source.exists(keys.progress)).toBe(false);
    const stored = await storeOf(drBucket, 'dr').get(keys.progress);
    const progress = dataMoverProgress.parse(JSON.parse(Buffer.from(stored ?? []).toString('utf8')));
    expect(progress).toEqual(finalProgressOf(restore));
    expect(progress).toMatchObject({ state: 'Completed', result: { kind: 'file-restore', files: 2 } });
  }, 180_000);
});
